/**
 * T3 error bodies are masked before any cut (CONTRACT.md "HTTP"): a proxy or T3 server that
 * quotes the bearer in a 5xx text body or in a JSON error's fields, at every position around
 * the 200-character cut of a body part and the 500-character cap of the whole message, leaves
 * no piece of 5+ characters of it in the error. A URL's query is not shown.
 */
import { afterEach, expect, test } from "bun:test";
import { clearSecretsForTest, registerSecrets } from "../../util/redact.ts";
import { createT3Http, type FetchLike } from "./http.ts";

const TOKEN = "Qw7Er-Ty3Ui8Op1As6Df0Gh4Jk9Lz2Xc5";
afterEach(clearSecretsForTest);

function longestPiece(text: string): number {
	let best = 0;
	for (let i = 0; i < TOKEN.length; i++)
		for (let j = i + best + 1; j <= TOKEN.length; j++) {
			if (text.includes(TOKEN.slice(i, j))) best = j - i;
			else break;
		}
	return best;
}

async function errorOf(
	fetch: FetchLike,
	url = "http://127.0.0.1:9",
): Promise<string> {
	const http = createT3Http({ url, token: TOKEN, fetch });
	try {
		await http.shell();
	} catch (error) {
		return (error as Error).message;
	}
	throw new Error("expected a failure");
}

test("a 5xx text body quoting the bearer across the cuts", async () => {
	registerSecrets([TOKEN]);
	for (let at = 160; at <= 520; at++) {
		if (at > 205 && at < 440) at = 440;
		const body = `${"x".repeat(at)}${TOKEN}${"y".repeat(100)}`;
		const message = await errorOf(
			async () => new Response(body, { status: 502 }),
		);
		expect(message).toContain("failed with 502");
		expect(message.length).toBeLessThanOrEqual(500);
		expect(longestPiece(message)).toBeLessThanOrEqual(4);
	}
});

test("JSON error fields quoting the bearer across the 200-character cut of each", async () => {
	registerSecrets([TOKEN]);
	for (let at = 170; at <= 205; at++) {
		const quoted = `${"r".repeat(at)}${TOKEN}`;
		const message = await errorOf(async () =>
			Response.json(
				{ _tag: "SomeError", reason: quoted, message: quoted },
				{ status: 403 },
			),
		);
		expect(message).toContain("403");
		expect(longestPiece(message)).toBeLessThanOrEqual(4);
	}
});

test("an unreachable URL is named without its query", async () => {
	const message = await errorOf(async () => {
		throw new TypeError("fetch failed");
	}, "http://127.0.0.1:9/?sig=q-secret-value");
	expect(message).toContain("cannot reach http://127.0.0.1:9/");
	expect(message).not.toContain("q-secret-value");
});
