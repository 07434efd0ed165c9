import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { linkUrl, looksLikeToken, newLinkToken, tokenHash } from "./tokens.ts";

describe("link tokens", () => {
	test("32 random bytes as 43 base64url characters, never the same twice", () => {
		const tokens = new Set(Array.from({ length: 200 }, () => newLinkToken()));
		expect(tokens.size).toBe(200);
		for (const token of tokens) {
			expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
			expect(Buffer.from(token, "base64url")).toHaveLength(32);
			expect(looksLikeToken(token)).toBe(true);
		}
	});

	test("the stored form is the SHA-256, hex", () => {
		const token = newLinkToken();
		expect(tokenHash(token)).toBe(
			createHash("sha256").update(token).digest("hex"),
		);
		expect(tokenHash(token)).not.toContain(token);
	});

	test("only a token-shaped segment is looked up", () => {
		expect(looksLikeToken("link.css")).toBe(false);
		expect(looksLikeToken(`${"a".repeat(42)}/`)).toBe(false);
		expect(looksLikeToken("a".repeat(44))).toBe(false);
	});

	test("the link is under public_url", () => {
		expect(linkUrl("https://t3mcp.example.ts.net/", "tok")).toBe(
			"https://t3mcp.example.ts.net/a/tok",
		);
	});
});
