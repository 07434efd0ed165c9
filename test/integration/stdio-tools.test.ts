/**
 * The tool tests again, over stdio: these integration test files run a second time in a child
 * `bun test` with T3CODE_MCP_TEST_TRANSPORT=stdio, where `stack.client()` launches the real
 * `t3code-mcp stdio` (XDG paths, working directory `/`) through the official client's stdio
 * transport instead of speaking HTTP to an in-process server (test/helpers/stack.ts). They are
 * the files whose tests need only the client and the simulators (no server internals, injected
 * clock or HTTP headers): t3_models, t3_dispatch with modes and options, t3_answer, t3_wait,
 * t3_thread, t3_threads, t3_manage, t3_delete, t3_diff and idempotency keys.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const FILES = [
	"test/integration/catalog.test.ts",
	"test/integration/frozen.test.ts",
	"test/integration/idempotency.test.ts",
	"test/integration/manage.test.ts",
];

test("catalog, frozen, idempotency and manage tests pass over stdio", async () => {
	const proc = Bun.spawn(
		[
			process.execPath,
			"test",
			"--timeout",
			"20000",
			...FILES.map((f) => `./${f}`),
		],
		{
			cwd: ROOT,
			env: { ...process.env, T3CODE_MCP_TEST_TRANSPORT: "stdio" },
			stdout: "pipe",
			stderr: "pipe",
		},
	);
	const [stdout, stderr, code] = await Promise.all([
		new Response(proc.stdout).text(),
		new Response(proc.stderr).text(),
		proc.exited,
	]);
	const output = `${stdout}\n${stderr}`;
	expect(code, output).toBe(0);
	const ran = Number(/Ran (\d+) tests? across (\d+) files?/.exec(output)?.[1]);
	expect(ran).toBeGreaterThan(30);
	expect(output).toContain(`${ran} pass`);
	expect(output).toMatch(/\s0 fail/);
	// The clients really went through `t3code-mcp stdio` processes (one per stack at least).
	expect(
		output.match(/\[stdio\] t3code-mcp stdio pid \d+/g)?.length,
	).toBeGreaterThanOrEqual(FILES.length);
}, 180_000);
