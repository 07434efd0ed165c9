/**
 * The operator's commands through the real CLI (issue 42): `hook secret` prints a whsec_ secret;
 * `hook test` delivers a signed `webhook.test` (exit 0), and exits 1 on a 500 and when nothing
 * listens, never printing the hook URL's path or a secret; `check` warns about a hook it cannot
 * reach and still passes; `sim --help` lists its flags and the simulated agent's prompts;
 * `--help` lists `hook`.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SIM_PROMPTS } from "../../src/sim/agent/prompts.ts";
import { hookWorkspace } from "../helpers/hook-workspace.ts";
import { freePort, runToExit } from "../helpers/process.ts";
import { TEST_SECRET } from "../helpers/receiver.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");
const HOOK_TOKEN = "operator-hook-token-2468";
const SECRET_PATH = "/in/path-secret-1357924680";

const workspace = hookWorkspace("t3code-mcp-operators-");

function cli(args: string[], env: Record<string, string> = {}) {
	return runToExit([process.execPath, "run", ENTRY, ...args], {
		cwd: workspace.dir,
		env: {
			PATH: process.env.PATH ?? "",
			HOME: workspace.dir,
			T3CODE_MCP_CONFIG: join(workspace.dir, "t3code.toml"),
			T3CODE_MCP_STATE: join(workspace.dir, "state.sqlite"),
			T3CODE_MCP_LOG_LEVEL: "info",
			...env,
		},
		timeout: 15_000,
	});
}

const hookEnv = (url: string) => ({
	T3CODE_MCP_HOOK_URL: url,
	T3CODE_MCP_HOOK_TOKEN: HOOK_TOKEN,
	T3CODE_MCP_HOOK_SECRET: TEST_SECRET,
});

function expectNothingSecret(text: string) {
	expect(text).not.toContain("path-secret");
	expect(text).not.toContain(HOOK_TOKEN);
	expect(text).not.toContain(TEST_SECRET.slice("whsec_".length));
}

describe("hook", () => {
	test("hook secret prints a new whsec_ secret, alone on its line", async () => {
		const run = await cli(["hook", "secret"]);
		expect(run.code).toBe(0);
		expect(run.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
		expect(run.stderr).toBe("");
	}, 20_000);

	test("hook test: a signed webhook.test the receiver verifies, exit 0", async () => {
		workspace.receiver.setMode("ok");
		const before = workspace.receiver.deliveries.length;
		const run = await cli(
			["hook", "test"],
			hookEnv(`${workspace.receiver.url}${SECRET_PATH}`),
		);
		expect(run.code).toBe(0);
		expect(workspace.receiver.deliveries).toHaveLength(before + 1);
		const delivery = workspace.receiver.deliveries[before];
		expect(delivery?.verified).toBe(true);
		expect(delivery?.body.type).toBe("webhook.test");
		expect(run.stdout).toMatch(
			/^✓ webhook\.test evt_\S+ to http:\/\/127\.0\.0\.1:\d+ .*HTTP 204 in \d+ ms/,
		);
		expectNothingSecret(run.stdout + run.stderr);
	}, 20_000);

	test("hook test: a receiver answering 500 is exit 1", async () => {
		workspace.receiver.setMode({ status: 500 });
		try {
			const run = await cli(
				["hook", "test"],
				hookEnv(`${workspace.receiver.url}${SECRET_PATH}`),
			);
			expect(run.code).toBe(1);
			expect(run.stdout).toContain("HTTP 500");
			expectNothingSecret(run.stdout + run.stderr);
		} finally {
			workspace.receiver.setMode("ok");
		}
	}, 20_000);

	test("hook test: nothing listening is exit 1, saying why", async () => {
		const port = await freePort();
		const run = await cli(
			["hook", "test"],
			hookEnv(`http://127.0.0.1:${port}${SECRET_PATH}`),
		);
		expect(run.code).toBe(1);
		expect(run.stdout).toContain("connection refused");
		expectNothingSecret(run.stdout + run.stderr);
	}, 20_000);

	test("hook test without a hook says what to set; a bad subcommand is exit 2", async () => {
		const none = await cli(["hook", "test"]);
		expect(none.code).toBe(1);
		expect(none.stderr).toContain("T3CODE_MCP_HOOK_URL");
		for (const argv of [["hook"], ["hook", "send"], ["hook", "test", "x"]]) {
			const bad = await cli(argv);
			expect(bad.code).toBe(2);
			expect(bad.stderr).toContain("usage: t3code-mcp hook secret|test");
		}
	}, 20_000);

	test("--help lists hook secret and hook test", async () => {
		const run = await cli(["--help"]);
		expect(run.stdout).toContain("hook secret");
		expect(run.stdout).toContain("hook test");
	}, 20_000);
});

describe("check", () => {
	test("an unreachable hook is a ⚠ with the fix; check still passes", async () => {
		const port = await freePort();
		const run = await cli(
			["check"],
			hookEnv(`http://127.0.0.1:${port}${SECRET_PATH}`),
		);
		expect(run.code).toBe(0);
		expect(run.stdout).toContain(
			`⚠ webhook: events are POSTed to http://127.0.0.1:${port} (the path is not shown), which cannot be reached now`,
		);
		expect(run.stdout).toContain("hook test");
		expectNothingSecret(run.stdout + run.stderr);
	}, 20_000);
});

describe("sim --help", () => {
	test("lists every flag and every prompt the simulated agent understands", async () => {
		const run = await cli(["sim", "--help"]);
		expect(run.code).toBe(0);
		expect(run.stdout).toStartWith("usage: t3code-mcp sim ");
		for (const flag of [
			"--host",
			"--port",
			"--token",
			"--project",
			"--protocol",
			"--step-ms",
			"--compat",
			"--pairing",
		])
			expect(run.stdout).toContain(`\n  ${flag} `);
		for (const p of SIM_PROMPTS) expect(run.stdout).toContain(`"${p.prompt}"`);
	}, 20_000);
});
