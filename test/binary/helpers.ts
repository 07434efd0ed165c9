/**
 * Helpers for tests of the compiled binary: build it once per test process, pick free ports,
 * spawn it with an explicit environment (never the developer's), poll /healthz.
 */
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { runToExit } from "../helpers/process.ts";

export const ROOT = resolve(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist", "t3code-mcp");

let built: Promise<string> | undefined;

/** `bun run build` once per test process; resolves to the binary path. */
export function ensureBinary(): Promise<string> {
	built ??= (async () => {
		const { code, stdout, stderr } = await runToExit(
			[process.execPath, "run", "build"],
			{
				cwd: ROOT,
				env: {
					PATH: process.env.PATH ?? "/usr/bin:/bin",
					HOME: process.env.HOME ?? "/tmp",
				},
			},
		);
		if (code !== 0)
			throw new Error(`bun run build failed (${code}):\n${stdout}\n${stderr}`);
		return BINARY;
	})();
	return built;
}

/** A port that was free a moment ago: bind port 0, read it, release it. */
export function freePort(): number {
	const server = Bun.listen({
		hostname: "127.0.0.1",
		port: 0,
		socket: { data() {} },
	});
	const port = server.port;
	server.stop(true);
	return port;
}

/** The only environment a spawned binary sees, plus `extra`. */
export function cleanEnv(
	extra: Record<string, string>,
): Record<string, string> {
	return {
		PATH: "/usr/local/bin:/usr/bin:/bin",
		HOME: "/nonexistent",
		LANG: "C.UTF-8",
		...extra,
	};
}

export interface Running {
	proc: Subprocess<"ignore", "pipe", "pipe">;
	/** Everything written to stdout so far. */
	stdout(): string;
	stderr(): string;
	/** Resolves with stdout once it matches `re`. */
	waitForStdout(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
	stop(): Promise<number>;
}

export function spawnBinary(
	args: string[],
	options: { env: Record<string, string>; cwd: string; binary?: string[] },
): Running {
	const cmd = options.binary ?? [BINARY];
	const proc = Bun.spawn([...cmd, ...args], {
		cwd: options.cwd,
		env: options.env,
		stdin: "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
	let out = "";
	let err = "";
	const drain = async (
		stream: ReadableStream<Uint8Array>,
		add: (s: string) => void,
	) => {
		const decoder = new TextDecoder();
		for await (const chunk of stream)
			add(decoder.decode(chunk, { stream: true }));
	};
	void drain(proc.stdout, (s) => {
		out += s;
	});
	void drain(proc.stderr, (s) => {
		err += s;
	});
	return {
		proc,
		stdout: () => out,
		stderr: () => err,
		async waitForStdout(re, timeoutMs = 10_000) {
			const deadline = Date.now() + timeoutMs;
			for (;;) {
				const m = out.match(re);
				if (m) return m;
				if (proc.exitCode !== null)
					throw new Error(
						`exited ${proc.exitCode} before ${re}: ${out}\n${err}`,
					);
				if (Date.now() > deadline)
					throw new Error(
						`no ${re} on stdout within ${timeoutMs} ms: ${out}\n${err}`,
					);
				await Bun.sleep(10);
			}
		},
		async stop() {
			if (proc.exitCode === null) proc.kill("SIGTERM");
			const timer = setTimeout(() => proc.kill("SIGKILL"), 8_000);
			const code = await proc.exited;
			clearTimeout(timer);
			return code;
		},
	};
}

/** Polls GET /healthz until it answers 200; returns the body and how long it took. */
export async function waitForHealthz(
	baseUrl: string,
	options: { timeoutMs?: number; proc?: { exitCode: number | null } } = {},
): Promise<{ body: Record<string, unknown>; ms: number }> {
	const started = performance.now();
	const deadline = Date.now() + (options.timeoutMs ?? 10_000);
	let last = "";
	for (;;) {
		try {
			const res = await fetch(`${baseUrl}/healthz`, {
				signal: AbortSignal.timeout(1_000),
			});
			if (res.status === 200)
				return {
					body: (await res.json()) as Record<string, unknown>,
					ms: performance.now() - started,
				};
			last = `status ${res.status}`;
		} catch (error) {
			last = (error as Error).message;
		}
		if (options.proc && options.proc.exitCode !== null)
			throw new Error(`process exited ${options.proc.exitCode}; last: ${last}`);
		if (Date.now() > deadline)
			throw new Error(`${baseUrl}/healthz did not answer: ${last}`);
		await Bun.sleep(5);
	}
}

/** A one-machine t3code.toml for a sim. */
export function simConfig(url: string, tokenEnv = "T3_SIM_TOKEN"): string {
	return `[machines.sim]\nurl = "${url}"\ntoken_env = "${tokenEnv}"\nprojects = ["*"]\nmodel = "claudeAgent/claude-opus-5"\n`;
}
