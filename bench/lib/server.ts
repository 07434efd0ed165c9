/**
 * The connector under test: the compiled binary (dist/t3code-mcp, built when missing or when
 * BENCH_BUILD=1) run as its own process on loopback, configured like a real deployment.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	type ServerProcess,
	startServerProcess,
} from "../../test/helpers/process.ts";
import type { SimRef } from "./rpc.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;
export const BINARY = join(ROOT, "dist/t3code-mcp");

export function ensureBinary(rebuild: boolean): {
	path: string;
	builtAt: string;
} {
	if (rebuild || !existsSync(BINARY)) {
		const build = Bun.spawnSync([process.execPath, "run", "build"], {
			cwd: ROOT,
			stdout: "inherit",
			stderr: "inherit",
		});
		if (build.exitCode !== 0) throw new Error("bun run build failed");
	}
	return { path: BINARY, builtAt: statSync(BINARY).mtime.toISOString() };
}

/**
 * The compiled binary; `BENCH_SOURCE=1` runs `src/index.ts` with this bun instead, and
 * `BENCH_CPU_PROF=<dir>` does that under `--cpu-prof` (a profile per connector process).
 */
function connectorCommand(): string[] {
	const profDir = process.env.BENCH_CPU_PROF;
	if (profDir)
		return [
			process.execPath,
			"--cpu-prof",
			"--cpu-prof-dir",
			profDir,
			join(ROOT, "src/index.ts"),
			"serve",
		];
	if (process.env.BENCH_SOURCE === "1")
		return [process.execPath, join(ROOT, "src/index.ts"), "serve"];
	return [BINARY, "serve"];
}

export function tempDir(): string {
	return mkdtempSync(join(tmpdir(), "t3code-mcp-bench-"));
}

export interface BenchServer extends ServerProcess {
	pid: number;
	dir: string;
	stop(): Promise<void>;
}

export async function startBinary(options: {
	machines: SimRef[];
	dir?: string;
	statePath?: string;
	env?: Record<string, string>;
	/** Pin the connector to this CPU (taskset), apart from the load generator. */
	cpu?: number;
}): Promise<BenchServer> {
	const dir = options.dir ?? tempDir();
	const server = await startServerProcess({
		dir,
		machines: options.machines,
		statePath: options.statePath ?? join(dir, "state.sqlite"),
		env: { T3CODE_MCP_LOG_LEVEL: "error", ...options.env },
		command: [
			...(options.cpu === undefined
				? []
				: ["taskset", "-c", String(options.cpu)]),
			...connectorCommand(),
		],
	});
	return {
		...server,
		pid: server.proc.pid,
		dir,
		async stop() {
			server.proc.kill("SIGTERM");
			const exited = await Promise.race([
				server.proc.exited,
				Bun.sleep(5_000).then(() => null),
			]);
			if (exited === null) {
				server.proc.kill("SIGKILL");
				await server.proc.exited;
			}
			if (!options.dir) rmSync(dir, { recursive: true, force: true });
		},
	};
}

/** One gauge from /metrics (no labels), e.g. `t3code_mcp_outbox_pending`. */
export async function metric(url: string, name: string): Promise<number> {
	const text = await (await fetch(`${url}/metrics`)).text();
	const line = text
		.split("\n")
		.find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{}`));
	return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : Number.NaN;
}

export interface Health {
	machines: Record<string, { state: string }>;
	outbox: { pending: number; oldest_pending_s: number; dead: number };
}

export async function health(url: string): Promise<Health> {
	return (await (await fetch(`${url}/healthz`)).json()) as Health;
}

export async function allOnline(url: string): Promise<boolean> {
	const h = await health(url);
	return Object.values(h.machines).every((m) => m.state === "online");
}

/** Polls until `predicate` holds; throws after `timeoutMs`. */
export async function until(
	predicate: () => boolean | Promise<boolean>,
	timeoutMs: number,
	what: string,
	everyMs = 5,
) {
	const deadline = performance.now() + timeoutMs;
	while (!(await predicate())) {
		if (performance.now() > deadline)
			throw new Error(`timed out waiting for ${what}`);
		await Bun.sleep(everyMs);
	}
}
