/**
 * The command line behaves like the HTTP server (issue 16): every command refuses an unknown flag
 * or a stray argument with exit 2; an unusable listen address is exit 3 with one line; every
 * configuration error is one line per problem with its fix, with nothing (no JSON log line)
 * before it; `healthcheck` finds the server where `serve` listens (env, then `[server]`);
 * T3CODE_MCP_TOKEN: empty is unset (the start log says /mcp is open), short is a config error;
 * /mcp open on a non-loopback address is a warning at start and a ⚠ in `check` that does not
 * fail it. Spawns the real CLI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { freePort, runToExit } from "../helpers/process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");

let dir: string;
let config: string;
beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-cli-"));
	config = join(dir, "t3code.toml");
	// No machines: a valid config whose warning ("no [machines…]") would be a JSON log line.
	writeFileSync(config, "# no machines\n");
});
afterAll(() => {
	rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI to its exit with `info` logging, so any log line before an error would show. */
function cli(args: string[], env: Record<string, string> = {}) {
	return runToExit([process.execPath, "run", ENTRY, ...args], {
		cwd: dir,
		env: {
			PATH: process.env.PATH ?? "",
			HOME: dir,
			XDG_CONFIG_HOME: dir,
			XDG_STATE_HOME: dir,
			T3CODE_MCP_CONFIG: config,
			T3CODE_MCP_STATE: join(dir, "state.sqlite"),
			T3CODE_MCP_HOST: "127.0.0.1",
			T3CODE_MCP_LOG_LEVEL: "info",
			...env,
		},
		timeout: 15_000,
	});
}

const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("a bad command line exits 2, for every command", () => {
	const cases: [string, string[]][] = [
		["serve", ["serve", "extra", "--bogus"]],
		["serve", ["serve", "--bogus"]],
		["demo", ["demo", "extra"]],
		["stdio", ["stdio", "--bogus"]],
		["check", ["check", "--bogus"]],
		["check", ["check", "extra", "--json"]],
		["healthcheck", ["healthcheck", "--bogus"]],
		["healthcheck", ["healthcheck", "extra"]],
		["sim", ["sim", "--bogus"]],
		["sim", ["sim", "extra"]],
		["pair", ["pair", "--bogus"]],
		["--version", ["--version", "extra"]],
		["--help", ["--help", "--bogus"]],
	];
	for (const [name, args] of cases)
		test(`${args.join(" ")}`, async () => {
			const run = await cli(args);
			expect(run.code).toBe(2);
			expect(run.stdout).toBe("");
			// Names the offending argument, and nothing was started (no log line).
			const offending = args.find((_arg, i) => i > 0) as string;
			expect(run.stderr).toContain(`"${offending}"`);
			expect(run.stderr).not.toMatch(/^\{/m);
			expect(run.stderr).toContain(`usage: t3code-mcp ${name}`);
		}, 20_000);

	test("an unknown command", async () => {
		const run = await cli(["serv"]);
		expect(run.code).toBe(2);
		expect(run.stderr).toStartWith('t3code-mcp: unknown command "serv"');
	});

	test("--help after a command prints help and exits 0", async () => {
		const run = await cli(["check", "--help"]);
		expect(run.code).toBe(0);
		expect(run.stdout).toStartWith("usage: t3code-mcp check [--json]\n");
	});

	// Every command, those parsing their own arguments (sim, pair) included: help is no error.
	for (const name of [
		"serve",
		"stdio",
		"demo",
		"healthcheck",
		"sim",
		"pair",
		"--version",
	])
		test(`${name} --help prints its usage on stdout and exits 0`, async () => {
			const run = await cli([name, "--help"]);
			expect(run.code).toBe(0);
			expect(run.stdout).toStartWith(`usage: t3code-mcp ${name}`);
			expect(run.stderr).toBe("");
		}, 20_000);
});

describe("an unusable listen address exits 3 with one line", () => {
	test("sim, too", async () => {
		const run = await cli(["sim", "--host", "999.1.1.1", "--port", "0"]);
		expect(run.code).toBe(3);
		expect(lines(run.stderr)).toEqual([
			expect.stringMatching(
				/^sim: 999\.1\.1\.1:0: cannot listen there .*--host/,
			),
		]);
		expect(run.stdout).toBe("");
	}, 20_000);

	const cases: [string, RegExp][] = [
		["999.1.1.1", /not a valid IP address/],
		["no-such-host.invalid", /does not resolve/],
	];
	// With a machine configured, too: nothing (its state, the state file) logs before the error.
	const withMachine = () => join(dir, "host-machine.toml");
	beforeAll(() =>
		writeFileSync(
			withMachine(),
			'[machines.mac]\nurl = "http://127.0.0.1:9"\ntoken_env = "T3_MAC_TOKEN"\nprojects = ["*"]\n',
		),
	);
	for (const [host, says] of cases)
		for (const configFile of ["no machines", "a machine"])
			test(`${host}, ${configFile}`, async () => {
				const port = String(await freePort());
				const run = await cli(["serve"], {
					T3CODE_MCP_HOST: host,
					T3CODE_MCP_PORT: port,
					T3CODE_MCP_STATE: join(dir, `host-${port}.sqlite`),
					T3_MAC_TOKEN: "mac-token-0123456789",
					...(configFile === "a machine"
						? { T3CODE_MCP_CONFIG: withMachine() }
						: {}),
				});
				expect(run.code).toBe(3);
				const [line, ...more] = lines(run.stderr);
				expect(more).toEqual([]);
				expect(line).toStartWith(`t3code-mcp: ${host}:${port}: `);
				expect(line).toMatch(says);
				expect(line).toContain("set T3CODE_MCP_HOST");
			}, 20_000);
});

describe("a configuration error is one line per problem, with its fix, and nothing before it", () => {
	const cases: {
		name: string;
		toml?: string;
		env?: Record<string, string>;
		says: RegExp;
	}[] = [
		{
			name: "TOML syntax",
			toml: '[machines.mac\nurl = "http://x"\n',
			says: /\.toml: TOML syntax error at line 1: .*; fix that line/,
		},
		{
			name: "a duplicate table",
			toml: "[server]\nport = 8001\n\n[server]\nport = 8002\n",
			says: /TOML syntax error at line 4: Cannot redefine table 'server'; \[server\] is defined twice: merge both into one table/,
		},
		{
			name: "a duplicate key",
			toml: "[server]\nport = 8001\nport = 8002\n",
			says: /TOML syntax error at line 3: .*; that key is set twice in its table: keep one/,
		},
		{
			name: "an unknown key",
			toml: "[server]\nprot = 8001\n",
			says: /server\.prot: unknown key; expected one of /,
		},
		{
			name: "a T3CODE_MCP_TOKEN shorter than 16 characters",
			env: { T3CODE_MCP_TOKEN: "fifteen-chars15" },
			says: /T3CODE_MCP_TOKEN: expected a secret of 16 or more characters, got 15 characters; generate one with `openssl rand -hex 32`/,
		},
	];
	for (const c of cases)
		test(c.name, async () => {
			const file = join(dir, `${c.name.replace(/\W+/g, "-")}.toml`);
			writeFileSync(file, c.toml ?? "# no machines\n");
			const env = { T3CODE_MCP_CONFIG: file, ...c.env };
			for (const command of ["serve", "stdio", "healthcheck"]) {
				const run = await cli([command], env);
				expect(run.code).toBe(3);
				expect(run.stdout).toBe("");
				const [line, ...more] = lines(run.stderr);
				expect(more).toEqual([]);
				expect(line).toStartWith("t3code-mcp: configuration error: ");
				expect(line).toMatch(c.says);
				// The token itself is never echoed.
				if (c.env?.T3CODE_MCP_TOKEN)
					expect(line).not.toContain(c.env.T3CODE_MCP_TOKEN);
			}
			const check = await cli(["check"], env);
			expect(check.code).toBe(3);
			const [line, ...more] = lines(check.stdout);
			expect(more).toEqual([]);
			expect(line).toStartWith("✗ configuration error: ");
			expect(line).toMatch(c.says);
		}, 30_000);
});

describe("healthcheck reads the address where serve does", () => {
	let health: ReturnType<typeof Bun.serve>;
	beforeAll(() => {
		health = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch: (req) =>
				new URL(req.url).pathname === "/healthz"
					? Response.json({ status: "ok" })
					: new Response("no", { status: 404 }),
		});
	});
	afterAll(() => health.stop(true));

	test("[server] host and port in the config file; the environment wins", async () => {
		const file = join(dir, "health.toml");
		writeFileSync(
			file,
			`[server]\nhost = "127.0.0.1"\nport = ${health.port}\n`,
		);
		const fromFile = await cli(["healthcheck"], {
			T3CODE_MCP_CONFIG: file,
			T3CODE_MCP_HOST: "",
		});
		expect(fromFile.stderr).toBe("");
		expect(fromFile.code).toBe(0);

		const elsewhere = String(await freePort());
		const fromEnv = await cli(["healthcheck"], {
			T3CODE_MCP_CONFIG: file,
			T3CODE_MCP_PORT: elsewhere,
		});
		expect(fromEnv.code).toBe(1);
		expect(fromEnv.stderr).toContain(
			`http://127.0.0.1:${elsewhere}/healthz did not answer`,
		);

		const viaEnv = await cli(["healthcheck"], {
			T3CODE_MCP_PORT: String(health.port),
		});
		expect(viaEnv.code).toBe(0);
	}, 30_000);
});

describe("T3CODE_MCP_TOKEN and an open /mcp", () => {
	/** Starts `serve`, reads its start log up to "listening", stops it (SIGTERM). */
	async function startLog(env: Record<string, string>): Promise<string[]> {
		const port = String(await freePort());
		const proc = Bun.spawn([process.execPath, "run", ENTRY, "serve"], {
			cwd: dir,
			env: {
				PATH: process.env.PATH ?? "",
				HOME: dir,
				T3CODE_MCP_CONFIG: config,
				T3CODE_MCP_STATE: join(dir, `log-${port}.sqlite`),
				T3CODE_MCP_PORT: port,
				T3CODE_MCP_LOG_LEVEL: "info",
				...env,
			},
			stdout: "pipe",
			stderr: "pipe",
		});
		const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
		const decoder = new TextDecoder();
		let text = "";
		const timer = setTimeout(() => proc.kill(9), 15_000);
		while (!text.includes('"msg":"listening"')) {
			const { value, done } = await reader.read();
			if (done) break;
			text += decoder.decode(value);
		}
		proc.kill("SIGTERM");
		expect(await proc.exited).toBe(0);
		clearTimeout(timer);
		return lines(text).map((l) => l.trim());
	}
	const parsed = (ls: string[]) =>
		ls.map((l) => JSON.parse(l) as Record<string, unknown>);

	test("set but empty counts as unset: the start log says /mcp is open", async () => {
		const log = parsed(
			await startLog({ T3CODE_MCP_HOST: "127.0.0.1", T3CODE_MCP_TOKEN: "" }),
		);
		const listening = log.find((l) => l.msg === "listening");
		expect(listening?.mcp).toBe(
			"open to anyone who can reach it (no [clients.*], T3CODE_MCP_TOKEN unset)",
		);
		expect(listening?.clients).toEqual([]);
		// On loopback, open is not worth a warning.
		expect(
			log.filter((l) => String(l.msg).includes("without T3CODE_MCP_TOKEN")),
		).toEqual([]);
	}, 30_000);

	test("a token of 16 characters is accepted and required", async () => {
		const log = parsed(
			await startLog({
				T3CODE_MCP_HOST: "127.0.0.1",
				T3CODE_MCP_TOKEN: "sixteen-chars-16",
			}),
		);
		const listening = log.find((l) => l.msg === "listening");
		expect(listening?.mcp).toBe("T3CODE_MCP_TOKEN needed (client default)");
		expect(listening?.clients).toEqual(["default"]);
	}, 30_000);

	test("with clients: the start log names them (and default for T3CODE_MCP_TOKEN), never open", async () => {
		const file = join(dir, "clients-log.toml");
		writeFileSync(
			file,
			'[clients.agent]\ntoken_env = "AGENT_TOKEN"\naccess = "read-only"\n[clients.later]\ntoken_env = "LATER_TOKEN"\naccess = "auto"\n',
		);
		const both = parsed(
			await startLog({
				T3CODE_MCP_CONFIG: file,
				T3CODE_MCP_HOST: "0.0.0.0",
				T3CODE_MCP_TOKEN: "server-token-0123456789",
				AGENT_TOKEN: "agent-token-0123456789",
			}),
		);
		const listening = both.find((l) => l.msg === "listening");
		expect(listening?.mcp).toBe(
			"clients only, each with its own bearer: default (T3CODE_MCP_TOKEN), agent; without a token, so not yet: later",
		);
		expect(listening?.clients).toEqual(["default", "agent"]);
		// Clients close /mcp, wherever it listens: no "open" and no open-bearer warning.
		expect(JSON.stringify(both)).not.toContain("open");
		expect(JSON.stringify(both)).not.toContain("0123456789");

		const alone = parsed(
			await startLog({
				T3CODE_MCP_CONFIG: file,
				T3CODE_MCP_HOST: "127.0.0.1",
				T3CODE_MCP_TOKEN: "",
				AGENT_TOKEN: "agent-token-0123456789",
			}),
		);
		expect(alone.find((l) => l.msg === "listening")?.clients).toEqual([
			"agent",
		]);
		expect(JSON.stringify(alone)).not.toContain("open");
	}, 30_000);

	test("open on a non-loopback address: a warning with the fix at start, after the port is bound", async () => {
		const log = parsed(
			await startLog({ T3CODE_MCP_HOST: "0.0.0.0", T3CODE_MCP_TOKEN: "" }),
		);
		const warning = log.find(
			(l) =>
				l.level === "warn" &&
				l.msg ===
					"listening on 0.0.0.0 without T3CODE_MCP_TOKEN: /mcp and /metrics need no bearer token",
		);
		expect(warning?.fix).toContain("set T3CODE_MCP_TOKEN");
	}, 30_000);

	test("check shows it as a ⚠ with the fix, and still passes", async () => {
		const run = await cli(["check"], {
			T3CODE_MCP_HOST: "0.0.0.0",
			T3CODE_MCP_TOKEN: "",
		});
		expect(run.stdout).toContain(
			"  ⚠ /mcp bearer: listening on 0.0.0.0 without T3CODE_MCP_TOKEN: /mcp and /metrics need no bearer token\n      fix: set T3CODE_MCP_TOKEN to a secret of 16 or more characters",
		);
		expect(run.stdout).toContain("all checks passed (1 warning)");
		expect(run.code).toBe(0);
		const json = await cli(["check", "--json"], {
			T3CODE_MCP_HOST: "0.0.0.0",
		});
		expect(json.code).toBe(0);
		expect(JSON.parse(json.stdout).config.checks).toContainEqual(
			expect.objectContaining({ name: "/mcp bearer", ok: true, warning: true }),
		);
		// With a token, or on loopback, there is nothing to warn about.
		const closed = await cli(["check"], {
			T3CODE_MCP_HOST: "0.0.0.0",
			T3CODE_MCP_TOKEN: "a-long-enough-token",
		});
		expect(closed.stdout).not.toContain("/mcp bearer");
	}, 30_000);
});

describe("check and [clients.*]", () => {
	let sim: Sim;
	beforeAll(async () => {
		sim = await startSim({
			projects: [
				{ title: "web", workspaceRoot: "/srv/t3/web" },
				{ title: "docs", workspaceRoot: "/srv/t3/docs" },
			],
		});
	});
	afterAll(() => sim.stop());

	const machine = () =>
		`[machines.mac]\nurl = "${sim.url}"\ntoken_env = "T3_MAC_TOKEN"\nprojects = ["*"]\n`;
	const client = (name: string, lines: string) =>
		`[clients.${name}]\naccess = "read-only"\n${lines}\n`;

	test("a client token file others may read, and a client whose projects or machines reach nothing online, are each a ⚠", async () => {
		const tokenFile = join(dir, "loose-client.token");
		writeFileSync(tokenFile, "loose-token-0123456789\n");
		chmodSync(tokenFile, 0o644);
		const file = join(dir, "check-clients.toml");
		writeFileSync(
			file,
			[
				machine(),
				'[machines.away]\nurl = "http://127.0.0.1:9"\ntoken_env = "T3_AWAY_TOKEN"\nprojects = ["*"]\n',
				client("web", 'token_env = "WEB_TOKEN"\nprojects = ["web"]'),
				client("mobile", 'token_env = "MOBILE_TOKEN"\nprojects = ["mobile"]'),
				client("remote", 'token_env = "REMOTE_TOKEN"\nmachines = ["away"]'),
				client("loose", `token_file = ${JSON.stringify(tokenFile)}`),
			].join("\n"),
		);
		const run = await cli(["check"], {
			T3CODE_MCP_CONFIG: file,
			T3_MAC_TOKEN: sim.token,
			T3_AWAY_TOKEN: "away-token-0123456789",
			WEB_TOKEN: "web-token-0123456789",
			MOBILE_TOKEN: "mobile-token-0123456789",
			REMOTE_TOKEN: "remote-token-0123456789",
		});
		expect(run.stdout).toContain(
			'  ✓ client web: access read-only; does not approve; machines mac, away; projects web (matching now: mac "web");',
		);
		expect(run.stdout).toMatch(
			/ {2}⚠ client mobile: .*projects mobile \(matching nothing now\).*\n {6}fix: its projects patterns \(mobile\) match no project its machines online now \(mac\) allow/,
		);
		expect(run.stdout).toMatch(
			/ {2}⚠ client remote: .*\n {6}fix: none of its machines \(away\) is online now/,
		);
		expect(run.stdout).toContain(
			`  ⚠ client loose token file permissions: token file ${tokenFile} (token_file) is readable by group or others (mode 0644)\n      fix: \`chmod 600 ${tokenFile}\``,
		);
		expect(run.stdout).not.toContain("0123456789");
		// The machine "away" fails check; the warnings alone would not.
		expect(run.code).toBe(1);

		const json = await cli(["check", "--json"], {
			T3CODE_MCP_CONFIG: file,
			T3_MAC_TOKEN: sim.token,
			WEB_TOKEN: "web-token-0123456789",
			MOBILE_TOKEN: "mobile-token-0123456789",
			REMOTE_TOKEN: "remote-token-0123456789",
		});
		const checks = JSON.parse(json.stdout).config.checks as {
			name: string;
			warning?: boolean;
		}[];
		expect(checks.filter((c) => c.warning).map((c) => c.name)).toEqual([
			"client mobile",
			"client remote",
			"client loose token file permissions",
		]);
	}, 30_000);

	test("a client token equal to a machine's, or holding whitespace, is a config error naming the client, never the token", async () => {
		const file = join(dir, "check-client-tokens.toml");
		writeFileSync(
			file,
			[
				machine(),
				client("agent", 'token_env = "AGENT_TOKEN"'),
				client("spaced", 'token_env = "SPACED_TOKEN"'),
			].join("\n"),
		);
		const env = {
			T3CODE_MCP_CONFIG: file,
			T3_MAC_TOKEN: sim.token,
			AGENT_TOKEN: sim.token,
			SPACED_TOKEN: "spaced-token\u001b[2J0123456789",
		};
		const check = await cli(["check"], env);
		expect(check.code).toBe(3);
		expect(lines(check.stdout)).toEqual([
			`✗ configuration error: ${file}: clients.agent.token_env: the token in AGENT_TOKEN is the T3 token of machine "mac" (machines.mac); give the client a token of its own (\`openssl rand -hex 32\`)`,
			`✗ configuration error: ${file}: clients.spaced.token_env: the token in SPACED_TOKEN holds whitespace or control characters; expected a token without whitespace or control characters (generate one with \`openssl rand -hex 32\`)`,
		]);
		const serve = await cli(["serve"], env);
		expect(serve.code).toBe(3);
		expect(lines(serve.stderr)).toHaveLength(2);
		for (const out of [check.stdout, serve.stderr]) {
			expect(out).not.toContain(sim.token);
			expect(out).not.toContain("0123456789");
		}
	}, 30_000);
});
