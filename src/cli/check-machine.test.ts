import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MachineConfig } from "../config/types.ts";
import { type Sim, startSim } from "../sim/index.ts";
import { runCheck } from "./check.ts";
import {
	type CheckResult,
	probeMachine,
	TOKEN_COMMAND,
	UPGRADE_FIX,
} from "./check-machine.ts";

const PROJECTS = [
	{ title: "api", workspaceRoot: "/srv/work/api" },
	{ title: "dotfiles", workspaceRoot: "/home/me/.dotfiles" },
];

let sim: Sim;
let v1: Sim;
let v3: Sim;
let dir: string;

/** A port nothing listens on: bound, read, released. */
function freePort(): number {
	const server = Bun.listen({
		hostname: "127.0.0.1",
		port: 0,
		socket: { data() {} },
	});
	const port = server.port;
	server.stop(true);
	return port;
}

function machine(over: Partial<MachineConfig> = {}): MachineConfig {
	return {
		name: "mac",
		url: sim.url,
		tokenEnv: "T3_MAC_TOKEN",
		tokenFile: null,
		token: sim.token,
		projects: ["*"],
		model: null,
		options: [],
		...over,
	};
}

const byName = (checks: CheckResult[], name: string) => {
	const found = checks.find((c) => c.name === name);
	if (!found)
		throw new Error(
			`no check "${name}" in ${checks.map((c) => c.name).join(", ")}`,
		);
	return found;
};

beforeAll(async () => {
	sim = await startSim({
		projects: PROJECTS,
		tokens: [{ token: "read-only-token", scopes: ["orchestration:read"] }],
	});
	v1 = await startSim({
		protocol: 1,
		projects: PROJECTS,
		serverVersion: "0.0.20",
	});
	v3 = await startSim({ protocol: 3 });
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-check-"));
});
afterAll(async () => {
	await Promise.all([sim.stop(), v1.stop(), v3.stop()]);
	rmSync(dir, { recursive: true, force: true });
});

describe("probeMachine against the simulator", () => {
	test("a healthy machine passes every check, and each pattern lists its projects", async () => {
		const report = await probeMachine(
			machine({ projects: ["*", "/srv/work/*", "dotfiles"] }),
		);
		expect(report.checks.map((c) => [c.name, c.ok])).toEqual([
			["reachable", true],
			["orchestration protocol 2", true],
			["token present", true],
			["authenticated", true],
			["scopes", true],
			["token expiry", true],
			["shell readable", true],
			["websocket ticket", true],
			['projects "*"', true],
			['projects "/srv/work/*"', true],
			['projects "dotfiles"', true],
		]);
		expect(byName(report.checks, 'projects "*"').detail).toBe(
			'matches "api", "dotfiles"',
		);
		expect(byName(report.checks, 'projects "/srv/work/*"').detail).toBe(
			'matches "api"',
		);
		expect(report.checks.every((c) => c.fix === undefined)).toBe(true);
	});

	test("a protocol-1 server fails the protocol check with the upgrade fix", async () => {
		const report = await probeMachine(
			machine({ url: v1.url, token: v1.token }),
		);
		const protocol = byName(report.checks, "orchestration protocol 2");
		expect(protocol.ok).toBe(false);
		expect(protocol.detail).toContain("protocol 1");
		expect(protocol.fix).toBe(UPGRADE_FIX);
		expect(protocol.fix).toBe(
			"upgrade T3 Code to 0.1.0 or later (orchestration protocol 2)",
		);
		expect(byName(report.checks, "reachable").ok).toBe(true);
	});

	test("a newer protocol fails the protocol check with: update t3code-mcp", async () => {
		const report = await probeMachine(
			machine({ url: v3.url, token: v3.token }),
		);
		const protocol = byName(report.checks, "orchestration protocol 2");
		expect(protocol.ok).toBe(false);
		expect(protocol.detail).toContain("protocol 3");
		expect(protocol.fix).toBe(
			"this t3code-mcp is too old for orchestration protocol 3; update t3code-mcp",
		);
	});

	test("a wrong token fails authentication with the token command as the fix", async () => {
		const report = await probeMachine(machine({ token: "not-the-token" }));
		const auth = byName(report.checks, "authenticated");
		expect(auth.ok).toBe(false);
		expect(auth.fix).toContain(TOKEN_COMMAND);
		expect(auth.fix).toContain("export T3_MAC_TOKEN=");
		expect(JSON.stringify(report)).not.toContain("not-the-token");
	});

	test("check shows the token's expiry, and fails within 7 days of it", async () => {
		const start = Date.now();
		const healthy = await probeMachine(machine(), { now: () => start });
		expect(byName(healthy.checks, "token expiry").detail).toMatch(
			/^expires at \d{4}-\d\d-\d\dT.*Z \(in (29|30) days\)$/,
		);
		const soon = await probeMachine(machine(), {
			now: () => start + 24 * 24 * 3600 * 1000,
		});
		const expiry = byName(soon.checks, "token expiry");
		expect(expiry.ok).toBe(false);
		expect(expiry.detail).toMatch(
			/^expires at .*Z \(in (5|6) days\): it stops working then, with no refresh$/,
		);
		expect(expiry.fix).toContain("mint a new token before then");
	});

	test("a token file is read at every check and named in every line about it", async () => {
		const file = join(dir, "mac.token");
		const m = machine({ tokenEnv: null, tokenFile: file, token: undefined });
		const missing = byName((await probeMachine(m)).checks, "token present");
		expect(missing.ok).toBe(false);
		expect(missing.detail).toBe(
			`token file ${file} (token_file) does not exist; write it with \`t3code-mcp pair <pairing-url> --token-file ${file}\``,
		);
		expect(missing.fix).toContain(
			`t3code-mcp pair <pairing-url> --token-file ${file}`,
		);
		writeFileSync(file, `${sim.token}\n`, { mode: 0o600 });
		const report = await probeMachine(m);
		expect(byName(report.checks, "token present").detail).toBe(
			`token file ${file} is readable`,
		);
		expect(byName(report.checks, "authenticated").detail).toBe(
			`the token in token file ${file} is accepted`,
		);
		expect(report.checks.every((c) => c.ok)).toBe(true);
	});

	test("a missing token says which variable to export", async () => {
		const report = await probeMachine(machine({ token: undefined }));
		const present = byName(report.checks, "token present");
		expect(present).toMatchObject({
			ok: false,
			detail: "T3_MAC_TOKEN (token_env) is unset or empty",
		});
		expect(present.fix).toContain(
			"t3 auth session issue --scope orchestration:read --scope orchestration:operate --token-only --ttl 365d --label t3code-mcp",
		);
		expect(report.checks.some((c) => c.name === "authenticated")).toBe(false);
	});

	test("a token file readable by group or others is a ⚠ naming it, and check still passes", async () => {
		const file = join(dir, "loose.token");
		writeFileSync(file, `${sim.token}\n`);
		chmodSync(file, 0o644);
		const report = await probeMachine(
			machine({ tokenEnv: null, tokenFile: file, token: undefined }),
		);
		expect(byName(report.checks, "token file permissions")).toEqual({
			name: "token file permissions",
			ok: true,
			warning: true,
			detail: `token file ${file} (token_file) is readable by group or others (mode 0644)`,
			fix: `\`chmod 600 ${file}\`: only the user t3code-mcp runs as needs to read it`,
		});
		expect(byName(report.checks, "authenticated").ok).toBe(true);
		expect(report.checks.every((c) => c.ok)).toBe(true);
		chmodSync(file, 0o600);
		const tight = await probeMachine(
			machine({ tokenEnv: null, tokenFile: file, token: undefined }),
		);
		expect(tight.checks.map((c) => c.name)).not.toContain(
			"token file permissions",
		);
	});

	test("a token file of two lines says so; the server is still reached", async () => {
		const file = join(dir, "two-lines.token");
		writeFileSync(file, `${sim.token}\nsomething else\n`, { mode: 0o600 });
		const report = await probeMachine(
			machine({ tokenEnv: null, tokenFile: file, token: undefined }),
		);
		expect(byName(report.checks, "reachable").ok).toBe(true);
		expect(byName(report.checks, "token present")).toMatchObject({
			ok: false,
			detail: `token file ${file} (token_file) holds 2 non-empty lines; write the token alone in it (\`t3code-mcp pair\` does)`,
		});
	});

	test("a token without orchestration:operate fails the scope check", async () => {
		const report = await probeMachine(machine({ token: "read-only-token" }));
		expect(byName(report.checks, "authenticated").ok).toBe(true);
		const scopes = byName(report.checks, "scopes");
		expect(scopes.ok).toBe(false);
		expect(scopes.detail).toContain("missing orchestration:operate");
		expect(scopes.fix).toContain(TOKEN_COMMAND);
	});

	test("an unreachable URL fails the first check and skips the network ones", async () => {
		const url = `http://127.0.0.1:${freePort()}`;
		const report = await probeMachine(machine({ url }));
		expect(report.checks.map((c) => [c.name, c.ok])).toEqual([
			["reachable", false],
			["token present", true],
		]);
		const reachable = byName(report.checks, "reachable");
		expect(reachable.detail).toContain(url);
		expect(reachable.fix).toContain("[machines.mac]");
	});

	test("a pattern that matches nothing lists the visible titles and paths", async () => {
		const report = await probeMachine(machine({ projects: ["api", "web-*"] }));
		expect(byName(report.checks, 'projects "api"').ok).toBe(true);
		const none = byName(report.checks, 'projects "web-*"');
		expect(none.ok).toBe(false);
		expect(none.detail).toBe(
			'matches no project; projects on the server: "api" (/srv/work/api), "dotfiles" (/home/me/.dotfiles)',
		);
		expect(none.fix).toContain("[machines.mac]");
	});
});

describe("runCheck", () => {
	function configFile(name: string, body: string): string {
		const file = join(dir, name);
		writeFileSync(file, body);
		return file;
	}
	async function run(argv: string[], env: Record<string, string>) {
		let out = "";
		const code = await runCheck(argv, {
			env,
			cwd: dir,
			write: (t) => (out += t),
		});
		return { code, out };
	}

	test("all ✓ exits 0 and prints one line per check, never the token", async () => {
		const file = configFile(
			"ok.toml",
			`[machines.mac]\nurl = "${sim.url}"\ntoken_env = "T3_MAC_TOKEN"\nprojects = ["*"]\n`,
		);
		const env = {
			T3CODE_MCP_CONFIG: file,
			T3_MAC_TOKEN: sim.token,
			T3CODE_MCP_STATE: join(dir, "s/state.sqlite"),
		};
		const { code, out } = await run([], env);
		expect(code).toBe(0);
		expect(out).toContain("✓ config valid: 1 machine: mac");
		expect(out).toContain("✓ state file usable:");
		expect(out).toContain("✓ orchestration protocol 2");
		expect(out).toContain('✓ projects "*": matches "api", "dotfiles"');
		expect(out).not.toContain("✗");
		expect(out).toEndWith("all checks passed\n");
		expect(out).not.toContain(sim.token);
	});

	test("--json gives {ok, config, machines} and exit 1 when a machine fails", async () => {
		const file = configFile(
			"mixed.toml",
			[
				`[machines.good]\nurl = "${sim.url}"\ntoken_env = "T3_GOOD"\nprojects = ["*"]`,
				`[machines.old]\nurl = "${v1.url}"\ntoken_env = "T3_OLD"\nprojects = ["*"]`,
			].join("\n"),
		);
		const env = {
			T3CODE_MCP_CONFIG: file,
			T3_GOOD: sim.token,
			T3_OLD: v1.token,
			T3CODE_MCP_STATE: ":memory:",
		};
		const { code, out } = await run(["--json"], env);
		expect(code).toBe(1);
		const report = JSON.parse(out);
		expect(report.ok).toBe(false);
		expect(report.config.file).toBe(file);
		expect(report.machines.map((m: { name: string }) => m.name)).toEqual([
			"good",
			"old",
		]);
		expect(report.machines[0].checks.every((c: CheckResult) => c.ok)).toBe(
			true,
		);
		expect(report.machines[1].checks).toContainEqual({
			name: "orchestration protocol 2",
			ok: false,
			detail:
				"the server reports no orchestrationProtocolVersion (protocol 1), T3 Code 0.0.20",
			fix: UPGRADE_FIX,
		});
		expect(out).not.toContain(sim.token);
		expect(out).not.toContain(v1.token);
	});

	test("the human output puts the fix under each ✗", async () => {
		const file = configFile(
			"bad-token.toml",
			`[machines.mac]\nurl = "${sim.url}"\ntoken_env = "T3_MAC_TOKEN"\nprojects = ["nothing-*"]\n`,
		);
		const { code, out } = await run([], {
			T3CODE_MCP_CONFIG: file,
			T3CODE_MCP_STATE: ":memory:",
		});
		expect(code).toBe(1);
		expect(out).toContain(
			"✗ token present: T3_MAC_TOKEN (token_env) is unset or empty\n      fix: on the T3 machine run `t3 auth session issue",
		);
		expect(out).toEndWith("1 check failed\n");
	});

	test("a configuration error exits 3 with the problem", async () => {
		const file = configFile(
			"broken.toml",
			`[machines.mac]\ntoken_env = "T3_MAC_TOKEN"\n`,
		);
		const { code, out } = await run([], { T3CODE_MCP_CONFIG: file });
		expect(code).toBe(3);
		expect(out).toContain("✗ configuration error");
		expect(out).toContain("machines.mac.url");
		const json = await run(["--json"], { T3CODE_MCP_CONFIG: file });
		expect(json.code).toBe(3);
		expect(JSON.parse(json.out)).toMatchObject({ ok: false, machines: [] });
	});

	test("an unwritable state path is a ✗", async () => {
		const file = configFile("state.toml", "");
		const blocker = join(dir, "a-file");
		writeFileSync(blocker, "");
		const { code, out } = await run([], {
			T3CODE_MCP_CONFIG: file,
			T3CODE_MCP_STATE: join(blocker, "x.sqlite"),
		});
		expect(code).toBe(1);
		expect(out).toContain("✗ state file usable:");
	});

	test("an unknown flag exits 2", async () => {
		expect((await run(["--nope"], {})).code).toBe(2);
	});
});
