import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentialToken } from "./credentials.ts";

const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-creds-"));
writeFileSync(join(dir, "T3_MAC_TOKEN"), "tok-123\n");
writeFileSync(join(dir, "T3_EMPTY"), "\n");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("reads $CREDENTIALS_DIRECTORY/<token_env>, trimmed", () => {
	expect(credentialToken({ CREDENTIALS_DIRECTORY: dir }, "T3_MAC_TOKEN")).toBe(
		"tok-123",
	);
});

test("undefined without a credentials directory, a file, or content", () => {
	expect(credentialToken({}, "T3_MAC_TOKEN")).toBeUndefined();
	expect(
		credentialToken({ CREDENTIALS_DIRECTORY: dir }, "T3_OTHER"),
	).toBeUndefined();
	expect(
		credentialToken({ CREDENTIALS_DIRECTORY: dir }, "T3_EMPTY"),
	).toBeUndefined();
});

test("a token_env that is not a plain name never becomes a path", () => {
	expect(
		credentialToken({ CREDENTIALS_DIRECTORY: dir }, "../T3_MAC_TOKEN"),
	).toBeUndefined();
});
