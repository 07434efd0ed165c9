/**
 * `check` probes each hook URL by connecting and sending nothing: a receiver that listens is a
 * ✓ and sees no request; one that cannot be reached is a ⚠ with the fix that does not fail
 * `check`, in the text and in `--json`, never showing the URL's path.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hookWorkspace } from "../../test/helpers/hook-workspace.ts";
import { freePort } from "../../test/helpers/process.ts";
import { runCheck } from "./check.ts";
import { probeUrl } from "./hook-probe.ts";

const PATH = "/hooks/path-secret-abcdefghijklmnop";

const workspace = hookWorkspace("t3code-mcp-check-hook-");

async function check(hookUrl: string, argv: string[] = []) {
	let out = "";
	const code = await runCheck(argv, {
		env: {
			T3CODE_MCP_CONFIG: join(workspace.dir, "t3code.toml"),
			T3CODE_MCP_STATE: ":memory:",
			T3CODE_MCP_HOOK_URL: hookUrl,
		},
		cwd: workspace.dir,
		write: (t) => {
			out += t;
		},
	});
	return { code, out };
}

describe("check and the hook", () => {
	test("a receiver that listens: ✓, and it receives nothing", async () => {
		const before = workspace.receiver.attempts();
		const { code, out } = await check(`${workspace.receiver.url}${PATH}`);
		expect(code).toBe(0);
		expect(out).toContain(
			`✓ webhook: events are POSTed to ${new URL(workspace.receiver.url).origin} (the path is not shown); it accepts connections`,
		);
		expect(workspace.receiver.attempts()).toBe(before);
		expect(out).not.toContain("path-secret");
	});

	test("nothing listening: a ⚠ with the fix, and check still passes", async () => {
		const port = await freePort();
		const { code, out } = await check(`http://127.0.0.1:${port}${PATH}`);
		expect(code).toBe(0);
		expect(out).toMatch(
			new RegExp(
				`⚠ webhook: events are POSTed to http://127\\.0\\.0\\.1:${port} \\(the path is not shown\\), which cannot be reached now: connection refused`,
			),
		);
		expect(out).toContain(
			"fix: start the receiver or correct T3CODE_MCP_HOOK_URL",
		);
		expect(out).toMatch(/all checks passed \(\d+ warnings?\)/);
		expect(out).not.toContain("path-secret");
	});

	test("--json carries the warning", async () => {
		const port = await freePort();
		const { code, out } = await check(`http://127.0.0.1:${port}${PATH}`, [
			"--json",
		]);
		expect(code).toBe(0);
		const report = JSON.parse(out);
		expect(report.ok).toBe(true);
		const hook = report.config.checks.find(
			(c: { name: string }) => c.name === "webhook",
		);
		expect(hook).toMatchObject({ ok: true, warning: true });
		expect(hook.detail).toContain("cannot be reached now");
		expect(hook.fix).toContain("T3CODE_MCP_HOOK_URL");
		expect(out).not.toContain("path-secret");
	});

	test("the probe of an https URL completes the TLS handshake: a port speaking plain HTTP fails it", async () => {
		const plain = await probeUrl(
			`https://127.0.0.1:${new URL(workspace.receiver.url).port}/hook`,
		);
		expect(plain).toMatchObject({ ok: false });
		if (!plain.ok) expect(plain.reason).toContain("TLS handshake failed");
	});
});
