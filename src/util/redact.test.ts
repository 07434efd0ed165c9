import { afterEach, describe, expect, it } from "bun:test";
import type { AppConfig } from "../config/types.ts";
import {
	clearSecretsForTest,
	MASK,
	maskAndCap,
	maskCredentials,
	maskDeep,
	maskJsonText,
	maskPieces,
	maskSecrets,
	mayHoldSecret,
	redact,
	redactOwn,
	registerConfigSecrets,
	registerNames,
	registerSecrets,
	urlOrigin,
	urlShown,
} from "./redact.ts";

afterEach(clearSecretsForTest);

describe("maskSecrets", () => {
	it("masks every registered secret of 8+ characters, wherever it appears", () => {
		registerSecrets(["machine-token-123", "short", undefined]);
		expect(maskSecrets("got machine-token-123 twice: machine-token-123")).toBe(
			`got ${MASK} twice: ${MASK}`,
		);
		expect(maskSecrets("short stays")).toBe("short stays");
	});

	it("masks a whsec_ secret with and without its prefix, and URL-encoded values", () => {
		registerSecrets(["whsec_MDEyMzQ1Njc4OWFi", "tok/en+with=chars"]);
		expect(maskSecrets("key MDEyMzQ1Njc4OWFi")).toBe(`key ${MASK}`);
		expect(maskSecrets("q=tok%2Fen%2Bwith%3Dchars")).not.toContain("tok");
	});

	it("maskCredentials also masks Authorization, Bearer and credential values it does not know", () => {
		const text = [
			"Authorization: Bearer abcdefghijkl",
			'{"authorization":"Basic dXNlcjpwYXNzd29yZA=="}',
			"echo bearer zyxwvutsrqpo",
			"?wsTicket=tkt-1234&orchestrationProtocol=2",
			'{"access_token": "at-secret-value"}',
			"password=hunter22",
			"Cookie: session=cookie-value-1",
			"http://user:pw@example.com/x",
		].join("\n");
		const out = maskCredentials(text);
		expect(maskSecrets(text)).toBe(text);
		for (const leak of [
			"abcdefghijkl",
			"dXNlcjpwYXNzd29yZA",
			"zyxwvutsrqpo",
			"tkt-1234",
			"at-secret-value",
			"hunter22",
			"cookie-value-1",
			"user:pw",
		])
			expect(out).not.toContain(leak);
		expect(out).toContain("orchestrationProtocol=2");
		expect(out).toContain("example.com/x");
	});

	it("leaves ordinary text alone", () => {
		const text =
			"the token in T3_MAC_TOKEN is accepted; token lacks scope orchestration:operate; no token: environment variable T3_X_TOKEN is not set";
		expect(maskSecrets(text)).toBe(text);
		expect(maskCredentials(text)).toBe(text);
	});
});

describe("redact", () => {
	it("caps text at 500 characters after masking", () => {
		registerSecrets(["s".repeat(20)]);
		const out = redact(
			`${"x".repeat(490)}${"s".repeat(20)}${"y".repeat(1000)}`,
		);
		expect(out.length).toBeLessThanOrEqual(500);
		expect(out.endsWith("…")).toBe(true);
		expect(out).not.toContain("ssssssss");
	});
	it("keeps short text as is", () => {
		expect(redact("fine")).toBe("fine");
	});
});

describe("registerConfigSecrets", () => {
	it("registers tokens, hook token, hook secret and the hook URL's path", () => {
		registerConfigSecrets({
			file: "/x/t3code.toml",
			clients: [],
			machines: [
				{
					name: "m",
					url: "http://h:1",
					tokenEnv: "T",
					tokenFile: null,
					token: "machine-secret-1",
					projects: ["*"],
					model: null,
					options: [],
				},
			],
			server: {
				host: "127.0.0.1",
				port: 0,
				statePath: ":memory:",
				token: "inbound-secret-2",
				allowedHosts: [],
				allowedOrigins: [],
				hookUrl:
					"https://hooks.example/in/abcdef1234567890?sig=query-value-77&x=1",
				hookToken: "hook-token-3333",
				hookSecret: undefined,
				waitTimeoutS: 600,
				taskTtlS: 86_400,
				pingTimeoutS: 10,
				logLevel: "info",
				auditDays: 90,
			},
		});
		const out = maskSecrets(
			"machine-secret-1 inbound-secret-2 hook-token-3333 POST /in/abcdef1234567890?sig=query-value-77&x=1",
		);
		// Short path segments and values are route names, not secrets.
		expect(out).toBe(
			`${MASK} ${MASK} ${MASK} POST /in/${MASK}?sig=${MASK}&x=1`,
		);
	});
});

describe("urlOrigin", () => {
	it("shows only scheme, host and port", () => {
		expect(urlOrigin("https://hooks.example:8443/in/secret?x=1")).toBe(
			"https://hooks.example:8443",
		);
		expect(urlOrigin("not a url")).toBe("(invalid URL)");
	});
});

const SECRET = "s3cr3t-token-abcdefghij";

describe("mask first, then cut: no piece of a secret survives", () => {
	it("redact: a secret straddling the 500 cap at every position leaves ≤ 4 characters", () => {
		registerSecrets([SECRET]);
		for (let at = 480; at <= 505; at++) {
			const out = redact(`${"x".repeat(at)}${SECRET}${"y".repeat(600)}`);
			expect(out.length).toBeLessThanOrEqual(500);
			expect(longestPiece(out, SECRET)).toBeLessThanOrEqual(4);
		}
	});

	it("maskAndCap: around the cap, with the marker", () => {
		registerSecrets([SECRET]);
		for (let at = 80; at <= 101; at++) {
			const out = maskAndCap(
				`${"x".repeat(at)}${SECRET}${"y".repeat(at % 3 === 0 ? 0 : 200)}`,
				100,
				"…[truncated]",
			);
			expect(out.length).toBeLessThanOrEqual(100);
			expect(longestPiece(out, SECRET)).toBeLessThanOrEqual(4);
		}
		// Short text is only masked.
		expect(maskAndCap(`a ${SECRET} b`, 100, "…")).toBe(`a ${MASK} b`);
		// Masking shrank it under the cap, but it was longer: still marked as cut.
		const long = `${SECRET.repeat(10)}tail`;
		expect(maskAndCap(long, 60, "…")).toEndWith("…");
	});

	it("a text ending or starting with a piece of a secret (cut by T3, still streaming) has it masked", () => {
		registerSecrets([SECRET]);
		for (let k = 5; k < SECRET.length; k++) {
			expect(maskPieces(`streaming: ${SECRET.slice(0, k)}`)).toBe(
				`streaming: ${MASK}`,
			);
			expect(maskPieces(`${SECRET.slice(-k)} and more`)).toBe(
				`${MASK} and more`,
			);
			// The safety net masks whole secrets only (names are not mistaken for pieces).
			expect(maskSecrets(`${SECRET.slice(-k)} and more`)).toBe(
				`${SECRET.slice(-k)} and more`,
			);
		}
		// 4 characters are too common to mean anything.
		expect(maskPieces("ends with s3cr")).toBe("ends with s3cr");
		expect(maskPieces("ghij starts")).toBe("ghij starts");
	});
});

describe("idempotent", () => {
	it("masking twice changes nothing (the marker never grows)", () => {
		registerSecrets([SECRET]);
		const texts = [
			`Authorization: Bearer ${SECRET}`,
			"authorization: [redacted]",
			'{"access_token": "[redacted]"}',
			"token=[redacted]&x=1",
			"Cookie: [redacted]",
			"http://[redacted]@host/",
			`${SECRET.slice(0, 7)}`,
			`x-api-key=${SECRET}`,
		];
		for (const text of texts) {
			for (const mask of [maskCredentials, maskSecrets, maskPieces]) {
				const once = mask(text);
				expect(mask(once)).toBe(once);
				expect(once).not.toContain("]]");
			}
			const capped = redact(`${"z".repeat(495)}${text}`);
			expect(redact(capped)).toBe(capped);
		}
	});
});

describe("maskDeep and maskJsonText", () => {
	it("mask every string and key, and return the same object when nothing is found", () => {
		registerSecrets([SECRET]);
		const clean = { a: "x", b: [1, { c: "y" }] };
		expect(maskDeep(clean)).toBe(clean);
		const dirty = {
			a: `x ${SECRET}`,
			b: [1, { [SECRET]: "y", d: SECRET }],
		};
		expect(JSON.stringify(maskDeep(dirty))).toBe(
			JSON.stringify({ a: `x ${MASK}`, b: [1, { [MASK]: "y", d: MASK }] }),
		);
		expect(dirty.a).toBe(`x ${SECRET}`);
		const json = JSON.stringify(dirty);
		expect(mayHoldSecret(json)).toBe(true);
		expect(maskJsonText(json)).not.toContain("s3cr3t");
		expect(mayHoldSecret(JSON.stringify(clean))).toBe(false);
	});
});

describe("the safety net and texts T3 cut", () => {
	it("masks a piece of a secret next to an ellipsis, and leaves unmarked edges (names) alone", () => {
		registerSecrets([SECRET]);
		const snippet = `…said ${SECRET.slice(0, 9)}…`;
		const start = `...${SECRET.slice(-7)} and more`;
		const out = maskDeep({ snippet, start, name: SECRET.slice(0, 7) });
		expect(out).toEqual({
			snippet: `…said ${MASK}…`,
			start: `...${MASK} and more`,
			name: SECRET.slice(0, 7),
		});
		expect(mayHoldSecret(JSON.stringify({ snippet }))).toBe(true);
		expect(maskDeep(out)).toBe(out);
	});
});

describe("redactOwn: the secret masked, not its neighbours", () => {
	const TOKEN = "agent-token-0123456789";

	it("a client's name equal to the beginning of its token stays; the token is masked whole", () => {
		registerSecrets([TOKEN]);
		registerNames(["agent"]);
		expect(redactOwn("agent")).toBe("agent");
		expect(redactOwn("client agent")).toBe("client agent");
		expect(redactOwn('client "agent"')).toBe('client "agent"');
		expect(redactOwn(`${TOKEN} agent`)).toBe(`${MASK} agent`);
		expect(redactOwn(`agent ${TOKEN}`)).toBe(`agent ${MASK}`);
		// Not the name standing alone: a piece, masked.
		expect(redactOwn("client xagent")).toBe(`client x${MASK}`);
		expect(redactOwn("saw agent-token-01")).toBe(`saw ${MASK}`);
		// `redact` (outside text) still masks any piece at an edge.
		expect(redact("client agent")).toBe(`client ${MASK}`);
	});

	it("names come from the config with its secrets", () => {
		registerConfigSecrets({
			file: "/x.toml",
			server: {} as AppConfig["server"],
			machines: [{ name: "build-box", token: "build-box-token-0123456" }],
			clients: [{ name: "agent", token: TOKEN }],
		} as unknown as AppConfig);
		expect(redactOwn("machine build-box")).toBe("machine build-box");
		expect(redactOwn("client agent")).toBe("client agent");
		expect(redactOwn(`x ${TOKEN}`)).toBe(`x ${MASK}`);
	});

	it("every other piece of 5+ characters is masked at an edge and next to an ellipsis", () => {
		registerSecrets([TOKEN]);
		registerNames(["agent"]);
		for (let k = 6; k < TOKEN.length; k++) {
			expect(redactOwn(`saw ${TOKEN.slice(0, k)}`)).toBe(`saw ${MASK}`);
			expect(redactOwn(`${TOKEN.slice(-k)} and more`)).toBe(`${MASK} and more`);
		}
		expect(redactOwn("…said agent…")).toBe(`…said ${MASK}…`);
		// Without a name of that spelling, the piece is masked as before.
		clearSecretsForTest();
		registerSecrets([TOKEN]);
		expect(redactOwn("client agent")).toBe(`client ${MASK}`);
	});

	it("caps like redact, masking first, and masking twice changes nothing", () => {
		registerSecrets([TOKEN]);
		for (let at = 480; at <= 505; at++) {
			const out = redactOwn(`${"x".repeat(at)}${TOKEN}${"y".repeat(600)}`);
			expect(out.length).toBeLessThanOrEqual(500);
			expect(longestPiece(out, TOKEN)).toBeLessThanOrEqual(4);
			expect(redactOwn(out)).toBe(out);
		}
		expect(redactOwn("Authorization: Bearer abcdefghijkl")).toBe(
			`Authorization: ${MASK}`,
		);
	});
});

describe("urlShown", () => {
	it("drops the query and fragment", () => {
		expect(urlShown("http://h:1/api?token=abc#frag")).toBe("http://h:1/api");
		expect(urlShown("http://h:1/x")).toBe("http://h:1/x");
	});
});

/** The longest substring of `secret` found in `text`. */
function longestPiece(text: string, secret: string): number {
	let best = 0;
	for (let i = 0; i < secret.length; i++)
		for (let j = i + best + 1; j <= secret.length; j++) {
			if (text.includes(secret.slice(i, j))) best = j - i;
			else break;
		}
	return best;
}
