/**
 * `t3code-mcp pair` end to end (issue 17 item 6), spawning the real CLI: a link printed by
 * `sim --pairing` becomes a 0600 token file and config lines that `check` passes with the
 * expiry shown; the same link again, a link without operate, a DPoP-only token, a server on
 * another protocol, a token already expired, an uncertain reply and an 80 MiB answer are refused
 * with what to do next; a token expiring within 7 days is saved with a ⚠; `--url` reaches a server the link's address does not. No output of `pair` ever holds the link or the token.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	existsSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { type Finished, runToExit } from "../helpers/process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");

let dir: string;
let sim: Sim;
let v1: Sim;
/** `sim --pairing` as a process of its own, and the link it printed. */
let simProc: ReturnType<typeof Bun.spawn>;
let printed: { url: string; link: string };

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-pair-"));
	sim = await startSim({ label: "Build Box" });
	v1 = await startSim({ protocol: 1, serverVersion: "0.0.20" });
	simProc = Bun.spawn(
		[process.execPath, "run", ENTRY, "sim", "--port", "0", "--pairing"],
		{
			cwd: dir,
			stdout: "pipe",
			stderr: "pipe",
			env: { PATH: process.env.PATH ?? "" },
		},
	);
	const reader = (simProc.stdout as ReadableStream<Uint8Array>).getReader();
	let text = "";
	while (!text.includes("pairing link: ")) {
		const { value, done } = await reader.read();
		if (done) throw new Error(`sim exited: ${text}`);
		text += new TextDecoder().decode(value);
	}
	while (!/pairing link: \S+\n/.test(text))
		text += new TextDecoder().decode((await reader.read()).value);
	reader.releaseLock();
	printed = {
		url: text.match(/listening on (\S+)/)?.[1] ?? "",
		link: text.match(/pairing link: (\S+)\n/)?.[1] ?? "",
	};
});
afterAll(async () => {
	simProc.kill();
	await simProc.exited;
	await Promise.all([sim.stop(), v1.stop()]);
	rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI in `cwd` with nothing inherited but PATH, HOME and `env`. */
function cli(
	args: string[],
	env: Record<string, string> = {},
	cwd = dir,
): Promise<Finished> {
	return runToExit([process.execPath, "run", ENTRY, ...args], {
		cwd,
		env: { PATH: process.env.PATH ?? "", HOME: dir, ...env },
		timeout: 20_000,
	});
}

/** The credential of a link, and every secret a run of `pair` could leak. */
const credentialOf = (link: string) =>
	new URLSearchParams(new URL(link).hash.slice(1)).get("token") ?? "";

function expectNoSecret(run: Finished, secrets: string[]): void {
	for (const secret of secrets) {
		expect(secret.length).toBeGreaterThan(8);
		expect(run.stdout).not.toContain(secret);
		expect(run.stderr).not.toContain(secret);
	}
}

describe("pair", () => {
	test("a link from `sim --pairing`: token file 0600, config lines that `check` passes with the expiry; the same link again is refused", async () => {
		expect(printed.link).toStartWith(`${printed.url}/pair#token=`);
		const stateDir = join(dir, "state");
		const run = await cli(["pair", printed.link], {
			STATE_DIRECTORY: stateDir,
		});
		expect(run.stderr).toBe("");
		expect(run.code).toBe(0);
		// The sim labels itself "T3 simulator": that names the machine.
		const file = join(stateDir, "tokens", "t3-simulator.token");
		expect(statSync(file).mode & 0o777).toBe(0o600);
		const token = readFileSync(file, "utf8");
		expect(token).toMatch(/^sim-paired-[\w-]+$/);
		expect(run.stdout).toContain(`✓ token written to ${file} (mode 0600)`);
		expect(run.stdout).toMatch(
			/it expires at \d{4}-\d\d-\d\dT[\d:.]+Z: pair again before then/,
		);
		expectNoSecret(run, [credentialOf(printed.link), token, printed.link]);

		// The printed lines are a working config, as they stand.
		const lines = run.stdout.slice(run.stdout.lastIndexOf("[machines."));
		expect(lines).toBe(
			`[machines.t3-simulator]\nurl = "${printed.url}"\ntoken_file = "${file}"\nprojects = ["*"]\n`,
		);
		const config = join(dir, "paired.toml");
		writeFileSync(config, lines);
		const check = await cli(["check"], {
			T3CODE_MCP_CONFIG: config,
			T3CODE_MCP_STATE: join(dir, "check-state.sqlite"),
		});
		expect(check.stdout).toContain(
			`✓ token present: token file ${file} is readable`,
		);
		expect(check.stdout).toMatch(
			/✓ token expiry: expires at \d{4}-\d\d-\d\dT[\d:.]+Z \(in (29|30) days\)/,
		);
		expect(check.code).toBe(0);

		const again = await cli(["pair", printed.link], {
			STATE_DIRECTORY: stateDir,
		});
		expect(again.code).toBe(1);
		expect(again.stdout).toBe("");
		expect(again.stderr).toContain(
			"it has expired or was already used (a link works once). Next: mint a new link on the T3 machine (`t3 auth pairing create --scope orchestration:read --scope orchestration:operate --label t3code-mcp`",
		);
		expectNoSecret(again, [credentialOf(printed.link), token]);
		// The refused run left the first token alone.
		expect(readFileSync(file, "utf8")).toBe(token);
	});

	test("a link without orchestration:operate is refused, and nothing is written", async () => {
		const link = sim.pairingLink({ scopes: ["orchestration:read"] });
		const file = join(dir, "read-only.token");
		const run = await cli(["pair", link, "--token-file", file]);
		expect(run.code).toBe(1);
		expect(run.stderr).toContain(
			"the link does not grant both orchestration:read and orchestration:operate",
		);
		expect(run.stderr).toContain("Next: mint a new link");
		expect(existsSync(file)).toBe(false);
		expectNoSecret(run, [credentialOf(link)]);
	});

	test("--url reaches the server when the link's address does not; without it the link is not spent", async () => {
		const link = sim.pairingLink();
		const posts = sim.stats().requests["POST /oauth/token"] ?? 0;
		// The link as T3 printed it for another network: an address not reachable from here.
		const elsewhere = link.replace(sim.url, "http://127.0.0.1:9");
		const file = join(dir, "build.token");
		const unreachable = await cli(["pair", elsewhere, "--token-file", file]);
		expect(unreachable.code).toBe(1);
		expect(unreachable.stderr).toContain(
			"give --url with an address that reaches it. The link was not used: it still works.",
		);
		expect(sim.stats().requests["POST /oauth/token"] ?? 0).toBe(posts);

		const run = await cli([
			"pair",
			elsewhere,
			"--url",
			sim.url,
			"--machine",
			"build",
			"--token-file",
			file,
		]);
		expect(run.code).toBe(0);
		expect(run.stdout).toContain(`[machines.build]\nurl = "${sim.url}"`);
		expectNoSecret(run, [credentialOf(link), readFileSync(file, "utf8")]);
	});

	test("a DPoP-only token is refused and not saved", async () => {
		const link = sim.pairingLink({ tokenType: "DPoP" });
		const file = join(dir, "dpop.token");
		const run = await cli(["pair", link, "--token-file", file]);
		expect(run.code).toBe(1);
		expect(run.stderr).toContain(
			"T3 issued a DPoP token, bound to a key t3code-mcp does not hold",
		);
		expect(run.stderr).toContain("t3 auth session issue --scope");
		expect(existsSync(file)).toBe(false);
		expectNoSecret(run, [credentialOf(link)]);
	});

	test("the pre-release engine pairs too; a token file path that is a directory is refused before the link is used", async () => {
		const pre = await startSim({ compat: "prerelease" });
		try {
			const link = pre.pairingLink();
			const busy = await cli(["pair", link, "--token-file", dir]);
			expect(busy.code).toBe(1);
			expect(busy.stderr).toContain(
				`cannot write the token file ${dir}: it is not a regular file. Give --token-file with a path you can write. The link was not used`,
			);
			const file = join(dir, "pre.token");
			const run = await cli(["pair", link, "--token-file", file]);
			expect(run.code).toBe(0);
			expect(statSync(file).mode & 0o777).toBe(0o600);
			expectNoSecret(run, [credentialOf(link), readFileSync(file, "utf8")]);
		} finally {
			await pre.stop();
		}
	});

	test("a token T3 issues already expired is refused, and nothing is written", async () => {
		const link = sim.pairingLink({ tokenTtlMs: -60_000 });
		const file = join(dir, "expired.token");
		const run = await cli(["pair", link, "--token-file", file]);
		expect(run.code).toBe(1);
		expect(run.stdout).toBe("");
		expect(run.stderr).toBe(
			`pair: T3 issued a token that had already expired (expires_in -61 s); it was not saved. Next: mint a new link on the T3 machine (\`t3 auth pairing create --scope orchestration:read --scope orchestration:operate --label t3code-mcp\`, or the app's "pair a device") and run pair again; if it happens again, check the clock and the session lifetime on the T3 machine.\n`,
		);
		expect(existsSync(file)).toBe(false);
		expect(readdirSync(dir).filter((f) => f.startsWith("expired."))).toEqual(
			[],
		);
		expectNoSecret(run, [credentialOf(link)]);
	});

	test("a token expiring within 7 days is saved with a ⚠ saying when and what to do", async () => {
		const link = sim.pairingLink({ tokenTtlMs: 3 * 24 * 3600_000 });
		const file = join(dir, "short-lived.token");
		const run = await cli(["pair", link, "--token-file", file]);
		expect(run.code).toBe(0);
		expect(run.stdout).toContain(
			"⚠ the token expires in about 3 days, within 7 days: it stops working then, with no refresh. Pair again before then, or on the T3 machine issue a longer-lived token with `t3 auth session issue",
		);
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expectNoSecret(run, [credentialOf(link), readFileSync(file, "utf8")]);
		// A token of 30 days gets no ⚠ (the first test's); one of 8 days neither.
		const later = sim.pairingLink({ tokenTtlMs: 8 * 24 * 3600_000 });
		const fine = await cli([
			"pair",
			later,
			"--token-file",
			join(dir, "eight-days.token"),
		]);
		expect(fine.code).toBe(0);
		expect(fine.stdout).not.toContain("⚠");
	});

	test("an 80 MiB answer is cut at 64 KiB and refused, never read whole", async () => {
		/** Bytes each huge answer handed to the socket. */
		const produced: number[] = [];
		let posts = 0;
		const huge = () => {
			const at = produced.push(0) - 1;
			const chunk = new Uint8Array(64 * 1024).fill(0x20);
			return new Response(
				new ReadableStream<Uint8Array>({
					pull(controller) {
						if ((produced[at] as number) >= 80 * 1024 * 1024)
							return controller.close();
						produced[at] = (produced[at] as number) + chunk.byteLength;
						controller.enqueue(chunk);
					},
				}),
				{ headers: { "content-type": "application/json" } },
			);
		};
		let hugeDescriptor = true;
		const big = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch(request) {
				const path = new URL(request.url).pathname;
				if (path === "/.well-known/t3/environment")
					return hugeDescriptor
						? huge()
						: Response.json({ label: "big", orchestrationProtocolVersion: 2 });
				if (path === "/oauth/token") {
					posts++;
					return huge();
				}
				return new Response("no", { status: 404 });
			},
		});
		try {
			const link = `http://127.0.0.1:${big.port}/pair#token=big-credential-1234567`;
			const file = join(dir, "big.token");
			const descriptor = await cli(["pair", link, "--token-file", file]);
			expect(descriptor.code).toBe(1);
			expect(descriptor.stderr).toContain(
				`pair: cannot read http://127.0.0.1:${big.port}/.well-known/t3/environment: reading http://127.0.0.1:${big.port}/.well-known/t3/environment failed: the answer is larger than the 64 KiB read at most.`,
			);
			expect(descriptor.stderr).toContain("The link was not used");
			expect(posts).toBe(0);

			hugeDescriptor = false;
			const exchange = await cli(["pair", link, "--token-file", file]);
			expect(exchange.code).toBe(1);
			expect(exchange.stderr).toContain(
				"no clear answer from T3 (the answer is larger than the 64 KiB read at most): the link may have been used",
			);
			expect(posts).toBe(1);
			expect(existsSync(file)).toBe(false);
			expectNoSecret(exchange, ["big-credential-1234567"]);
			// What the server produced is what socket buffers hold, not 80 MiB.
			expect(produced).toHaveLength(2);
			for (const bytes of produced)
				expect(bytes).toBeLessThan(16 * 1024 * 1024);
		} finally {
			await big.stop(true);
		}
	});

	test("with no expires_in, an expiry already past by this host's clock is refused", async () => {
		const past = new Date(Date.now() - 3600_000).toISOString();
		const bare = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch(request) {
				const path = new URL(request.url).pathname;
				if (path === "/.well-known/t3/environment")
					return Response.json({
						label: "bare",
						orchestrationProtocolVersion: 2,
					});
				if (path === "/oauth/token")
					return Response.json({
						access_token: "bare-token-1234567890",
						issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
						token_type: "Bearer",
						scope: "orchestration:read orchestration:operate",
					});
				if (path === "/api/auth/session")
					return Response.json({
						authenticated: true,
						scopes: ["orchestration:read", "orchestration:operate"],
						expiresAt: past,
					});
				return new Response("no", { status: 404 });
			},
		});
		try {
			const file = join(dir, "bare.token");
			const run = await cli([
				"pair",
				`http://127.0.0.1:${bare.port}/pair#token=bare-credential-123456`,
				"--token-file",
				file,
			]);
			expect(run.code).toBe(1);
			expect(run.stderr).toStartWith(
				`pair: T3 says the new token expires at ${past}, already past by this host's clock; it was not saved. Next: check the clocks`,
			);
			expect(existsSync(file)).toBe(false);
			expectNoSecret(run, ["bare-credential-123456", "bare-token-1234567890"]);
		} finally {
			await bare.stop(true);
		}
	});

	test("a server not on protocol 2 is refused before the credential is sent", async () => {
		const link = v1.pairingLink();
		const run = await cli([
			"pair",
			link,
			"--token-file",
			join(dir, "v1.token"),
		]);
		expect(run.code).toBe(1);
		expect(run.stderr).toContain(
			"speaks orchestration protocol 1; t3code-mcp needs protocol 2: update T3 Code on that machine to 0.1.0 or later. The link was not used",
		);
		expect(v1.stats().requests["POST /oauth/token"] ?? 0).toBe(0);
	});

	test("an uncertain reply is never retried: mint a new link", async () => {
		let posts = 0;
		const flaky = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch(request) {
				const path = new URL(request.url).pathname;
				if (path === "/.well-known/t3/environment")
					return Response.json({
						label: "flaky",
						orchestrationProtocolVersion: 2,
					});
				if (path === "/oauth/token") {
					posts++;
					return new Response("upstream gone", { status: 502 });
				}
				return new Response("no", { status: 404 });
			},
		});
		try {
			const link = `http://127.0.0.1:${flaky.port}/pair#token=flaky-credential-123456`;
			const run = await cli([
				"pair",
				link,
				"--token-file",
				join(dir, "flaky.token"),
			]);
			expect(run.code).toBe(1);
			expect(run.stderr).toContain(
				"no clear answer from T3 (502): the link may have been used, and it works once, so pair does not send it again. Next: mint a new link",
			);
			expect(posts).toBe(1);
			expectNoSecret(run, ["flaky-credential-123456"]);
		} finally {
			await flaky.stop(true);
		}
	});

	test("bad command lines exit 2 without repeating the link", async () => {
		const link = sim.pairingLink();
		const secret = credentialOf(link);
		const posts = sim.stats().requests["POST /oauth/token"] ?? 0;
		for (const [args, message] of [
			[["pair"], "t3code-mcp pair: missing <pairing-url>"],
			[["pair", link, "--bogus"], 't3code-mcp pair: unknown flag "--bogus"'],
			[["pair", link, link], 't3code-mcp pair: unexpected argument "…"'],
			[
				["pair", link, "--url", "http://x:1/path"],
				"t3code-mcp pair: --url must be an http(s) origin",
			],
			[
				["pair", link.replace(/#.*/, "")],
				"t3code-mcp pair: the pairing link has no credential (#token=…)",
			],
		] as [string[], string][]) {
			const run = await cli(args);
			expect(run.code).toBe(2);
			expect(run.stderr).toStartWith(message);
			expect(run.stderr).toContain("usage: t3code-mcp pair <pairing-url>");
			expectNoSecret(run, [secret]);
		}
		expect(sim.stats().requests["POST /oauth/token"] ?? 0).toBe(posts);
	});
});
