import { afterEach, describe, expect, it } from "bun:test";
import {
	clearSecretsForTest,
	MASK,
	maskSecrets,
	redact,
	registerConfigSecrets,
	registerSecrets,
	urlOrigin,
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

	it("masks Authorization, Bearer and credential values it does not know", () => {
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
		const out = maskSecrets(text);
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
			machines: [
				{
					name: "m",
					url: "http://h:1",
					tokenEnv: "T",
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
				hookUrl: "https://hooks.example/in/abcdef123456",
				hookToken: "hook-token-3333",
				hookSecret: undefined,
				waitTimeoutS: 600,
				pingTimeoutS: 10,
				logLevel: "info",
			},
		});
		const out = maskSecrets(
			"machine-secret-1 inbound-secret-2 hook-token-3333 POST /in/abcdef123456",
		);
		expect(out).toBe(`${MASK} ${MASK} ${MASK} POST ${MASK}`);
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
