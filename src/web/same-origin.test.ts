import { describe, expect, it } from "bun:test";
import { originAllowed } from "./same-origin.ts";

const post = (
	headers: Record<string, string>,
	url = "http://127.0.0.1:8000/x",
) => new Request(url, { method: "POST", headers });

describe("originAllowed", () => {
	const publicUrl = "https://t3mcp.example.ts.net";

	it("lets a request without Origin through (the CSRF token is checked besides)", () => {
		expect(originAllowed(post({}), publicUrl)).toBe(true);
	});

	it("accepts public_url's origin and the request's own", () => {
		expect(originAllowed(post({ origin: publicUrl }), publicUrl)).toBe(true);
		expect(
			originAllowed(
				post({ origin: "HTTPS://T3MCP.example.ts.net:443" }),
				publicUrl,
			),
		).toBe(true);
		expect(
			originAllowed(post({ origin: "http://127.0.0.1:8000" }), publicUrl),
		).toBe(true);
		expect(
			originAllowed(post({ origin: "http://127.0.0.1:8000" }), undefined),
		).toBe(true);
	});

	it("refuses any other origin, and a malformed one", () => {
		expect(
			originAllowed(post({ origin: "http://evil.example" }), publicUrl),
		).toBe(false);
		expect(
			originAllowed(post({ origin: "http://127.0.0.1:8001" }), publicUrl),
		).toBe(false);
		expect(originAllowed(post({ origin: "not a url" }), publicUrl)).toBe(false);
	});

	it("takes Origin: null (no-referrer) for the request's own only with Sec-Fetch-Site: same-origin", () => {
		expect(
			originAllowed(
				post({ origin: "null", "sec-fetch-site": "same-origin" }),
				publicUrl,
			),
		).toBe(true);
		expect(originAllowed(post({ origin: "null" }), publicUrl)).toBe(false);
		expect(
			originAllowed(
				post({ origin: "null", "sec-fetch-site": "cross-site" }),
				publicUrl,
			),
		).toBe(false);
	});
});
