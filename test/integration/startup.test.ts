/**
 * Start-up errors are configuration errors (issue 9): a state path that cannot be used or a port
 * in use makes `serve` exit 3 with one line (what, what is wrong, what to do) and no stack trace,
 * and `check` reports the state problem as ✗ with its fix. One state file, one server: the second
 * refuses naming the first's pid, and `check` beside the running server reports its lock as ✓.
 * Spawns the real CLI.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb } from "../../src/store/db.ts";
import { freePort, startServerProcess } from "../helpers/process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");

let dir: string;
beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-startup-"));
	writeFileSync(join(dir, "t3code.toml"), "# no machines\n");
});
afterAll(() => {
	rmSync(dir, { recursive: true, force: true });
});

interface Run {
	code: number;
	stdout: string;
	stderr: string;
}

/** Runs the CLI (optionally wrapped, e.g. in unshare) to its exit, with a bounded time. */
async function runCli(
	args: string[],
	env: Record<string, string>,
	wrap: (cmd: string[]) => string[] = (cmd) => cmd,
): Promise<Run> {
	const proc = Bun.spawn(wrap([process.execPath, "run", ENTRY, ...args]), {
		cwd: dir,
		env: {
			PATH: process.env.PATH ?? "",
			HOME: dir,
			T3CODE_MCP_CONFIG: join(dir, "t3code.toml"),
			T3CODE_MCP_HOST: "127.0.0.1",
			T3CODE_MCP_LOG_LEVEL: "error",
			...env,
		},
		stdout: "pipe",
		stderr: "pipe",
	});
	const timer = setTimeout(() => proc.kill(9), 15_000);
	const [stdout, stderr, code] = await Promise.all([
		new Response(proc.stdout).text(),
		new Response(proc.stderr).text(),
		proc.exited,
	]);
	clearTimeout(timer);
	return { code, stdout, stderr };
}

/** `serve` on this state path (a free port) must exit 3 with one line naming it and `says`. */
async function expectServeRefuses(
	statePath: string,
	says: RegExp,
	wrap?: (cmd: string[]) => string[],
): Promise<string> {
	const port = String(await freePort());
	const run = await runCli(
		["serve"],
		{ T3CODE_MCP_STATE: statePath, T3CODE_MCP_PORT: port },
		wrap,
	);
	expect(run.code).toBe(3);
	const lines = run.stderr.trim().split("\n");
	expect(lines).toHaveLength(1);
	expect(lines[0]).toStartWith(`t3code-mcp: ${statePath}: `);
	expect(lines[0]).toMatch(says);
	expect(lines[0]).toContain("T3CODE_MCP_STATE");
	expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
	return lines[0] as string;
}

/** `check` on this state path: exit 1 and the state check a ✗ followed by its fix. */
async function expectCheckFails(
	statePath: string,
	says: RegExp,
	wrap?: (cmd: string[]) => string[],
): Promise<void> {
	const run = await runCli(["check"], { T3CODE_MCP_STATE: statePath }, wrap);
	expect(run.code).toBe(1);
	const line = run.stdout
		.split("\n")
		.find((l) => l.includes("✗ state file usable:"));
	expect(line).toBeDefined();
	expect(line).toMatch(says);
	expect(run.stdout).toMatch(
		/✗ state file usable: .*\n\s+fix: .*T3CODE_MCP_STATE/,
	);
}

describe("a state path that cannot be used", () => {
	test("under /proc", async () => {
		const path = "/proc/t3code-mcp/state.sqlite";
		await expectServeRefuses(
			path,
			/cannot create the directory \/proc\/t3code-mcp/,
		);
		await expectCheckFails(path, /cannot write in \/proc/);
	}, 30_000);

	test("a directory", async () => {
		const path = join(dir, "a-directory");
		mkdirSync(path, { recursive: true });
		await expectServeRefuses(
			path,
			/is a directory; point T3CODE_MCP_STATE .* at a file/,
		);
		await expectCheckFails(path, /is a directory/);
	}, 30_000);

	test("a file that is not sqlite is refused and left untouched", async () => {
		const path = join(dir, "notes.txt");
		writeFileSync(path, "my precious notes\n");
		await expectServeRefuses(path, /is not a sqlite database/);
		await expectCheckFails(path, /is not a sqlite database/);
		expect(await Bun.file(path).text()).toBe("my precious notes\n");
	}, 30_000);

	test("another application's sqlite file is refused and left untouched", async () => {
		const path = join(dir, "other-app.sqlite");
		const other = new Database(path, { create: true });
		other.exec("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)");
		other.close();
		await expectServeRefuses(
			path,
			/is a sqlite database of another application \(tables: photos\)/,
		);
		await expectCheckFails(path, /another application/);
		const again = new Database(path, { readonly: true });
		const tables = again
			.query("SELECT name FROM sqlite_master WHERE type = 'table'")
			.all();
		again.close();
		expect(tables).toEqual([{ name: "photos" }]);
	}, 30_000);
});

const unshareReason = (() => {
	if (process.platform !== "linux") return "needs Linux";
	if (process.getuid?.() !== 0) return "needs root for unshare --mount";
	const probe = Bun.spawnSync(
		["unshare", "--mount", "--fork", "sh", "-c", "mount --bind -o ro / /mnt"],
		{ stderr: "pipe" },
	);
	return probe.exitCode === 0
		? undefined
		: `unshare/mount do not work here: ${probe.stderr.toString().trim()}`;
})();

// Root passes every permission test, so "read-only" is a read-only bind mount in a private
// mount namespace, as a container's `:ro` volume is.
describe.skipIf(unshareReason !== undefined)(
	`a read-only location${unshareReason ? ` (skipped: ${unshareReason})` : ""}`,
	() => {
		const readOnly =
			(path: string) =>
			(cmd: string[]): string[] => [
				"unshare",
				"--mount",
				"--fork",
				"sh",
				"-c",
				'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"',
				path,
				...cmd,
			];

		test("an existing state file on a read-only mount", async () => {
			const ro = join(dir, "ro-existing");
			mkdirSync(ro, { recursive: true });
			const path = join(ro, "state.sqlite");
			// A real state file, as a server left it before the volume became read-only.
			openDb(path).close();
			await expectServeRefuses(path, /read-only file system/, readOnly(ro));
			await expectCheckFails(path, /read-only file system/, readOnly(ro));
		}, 30_000);

		test("a missing state file in a read-only directory", async () => {
			const ro = join(dir, "ro-empty");
			mkdirSync(ro, { recursive: true });
			const path = join(ro, "state.sqlite");
			await expectServeRefuses(path, /read-only file system/, readOnly(ro));
			await expectCheckFails(path, /read-only file system/, readOnly(ro));
		}, 30_000);
	},
);

describe("a port in use", () => {
	let blocker: Server;
	let port: number;
	beforeAll(async () => {
		blocker = createServer();
		await new Promise<void>((resolve) =>
			blocker.listen(0, "127.0.0.1", resolve),
		);
		port = (blocker.address() as { port: number }).port;
	});
	afterAll(async () => {
		await new Promise<void>((resolve) => blocker.close(() => resolve()));
	});

	test("serve exits 3 with one line naming the address and the fix", async () => {
		const run = await runCli(["serve"], {
			T3CODE_MCP_STATE: join(dir, "port-test.sqlite"),
			T3CODE_MCP_PORT: String(port),
		});
		expect(run.code).toBe(3);
		expect(run.stderr.trim()).toBe(
			`t3code-mcp: 127.0.0.1:${port}: the port is in use by another process; stop the other process, or set T3CODE_MCP_PORT (or [server] port in ${join(dir, "t3code.toml")}) to a free port`,
		);
	}, 30_000);
});

describe("one state file, one server", () => {
	test("a second server refuses naming the first's pid; check beside the first reports its lock as ✓", async () => {
		const statePath = join(dir, "shared", "state.sqlite");
		const sub = join(dir, "first");
		mkdirSync(sub, { recursive: true });
		const first = await startServerProcess({
			dir: sub,
			machines: [],
			statePath,
		});
		try {
			const line = await expectServeRefuses(
				statePath,
				new RegExp(
					`in use by another t3code-mcp process \\(pid ${first.proc.pid} on host [^)]+\\), which holds ${statePath}\\.lock; stop that process`,
				),
			);
			expect(line).toContain(statePath);

			const check = await runCli(["check"], { T3CODE_MCP_STATE: statePath });
			expect(check.stdout).toContain(
				`✓ state file lock: held by the running server (pid ${first.proc.pid} on host`,
			);
			expect(check.stdout).toContain("✓ state file usable:");
			expect(check.code).toBe(0);
		} finally {
			await first.kill("SIGKILL");
		}
		// The kernel drops the lock with the process: the next server starts on the same file.
		const next = await startServerProcess({
			dir: sub,
			machines: [],
			statePath,
		});
		await next.kill();
		const check = await runCli(["check"], { T3CODE_MCP_STATE: statePath });
		expect(check.stdout).toContain("✓ state file lock: free");
	}, 30_000);
});
