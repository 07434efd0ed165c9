/**
 * Starts the compiled binary on a state file against simulated machines and times it:
 * spawn → first /healthz 200 → every machine online. Shared by the footprint and scale benches.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../test/helpers/process.ts";
import type { SimRef } from "./rpc.ts";
import { allOnline, BINARY, until } from "./server.ts";

function writeConfig(dir: string, machines: SimRef[]): Record<string, string> {
	const env: Record<string, string> = {};
	const lines: string[] = [];
	for (const m of machines) {
		const tokenEnv = `T3_${m.name.toUpperCase()}_TOKEN`;
		env[tokenEnv] = m.token;
		lines.push(
			`[machines.${m.name}]`,
			`url = "${m.url}"`,
			`token_env = "${tokenEnv}"`,
			'projects = ["*"]',
			'model = "claudeAgent/claude-opus-5"',
			"",
		);
	}
	writeFileSync(join(dir, "t3code.toml"), lines.join("\n"));
	return env;
}

export interface Started {
	proc: ReturnType<typeof Bun.spawn>;
	url: string;
	startMs: number;
	onlineMs: number;
}

/** Spawn → first /healthz 200 (polled every ms) → every machine online (polled every 20 ms). */
export async function startTimed(
	dir: string,
	statePath: string,
	machines: SimRef[],
): Promise<Started> {
	const port = await freePort();
	const env = {
		PATH: process.env.PATH ?? "",
		HOME: dir,
		T3CODE_MCP_CONFIG: join(dir, "t3code.toml"),
		T3CODE_MCP_STATE: statePath,
		T3CODE_MCP_HOST: "127.0.0.1",
		T3CODE_MCP_PORT: String(port),
		T3CODE_MCP_LOG_LEVEL: "error",
		...writeConfig(dir, machines),
	};
	const url = `http://127.0.0.1:${port}`;
	const t0 = performance.now();
	const proc = Bun.spawn([BINARY, "serve"], {
		cwd: dir,
		env,
		stdout: "ignore",
		stderr: "inherit",
	});
	await until(
		async () => {
			if (proc.exitCode !== null)
				throw new Error(`server exited with ${proc.exitCode}`);
			return fetch(`${url}/healthz`).then(
				(r) => r.status === 200,
				() => false,
			);
		},
		15_000,
		"/healthz",
		1,
	);
	const startMs = performance.now() - t0;
	// Every 20 ms, not 5: a /healthz of 500 machines costs the connector ~1.2 ms, so polling
	// every 5 ms took a fifth of its CPU away from the start being timed (±10 ms on seconds).
	await until(() => allOnline(url), 60_000, "every machine online", 20);
	return { proc, url, startMs, onlineMs: performance.now() - t0 };
}

export async function stopProc(proc: Started["proc"]): Promise<void> {
	proc.kill("SIGTERM");
	if (
		(await Promise.race([proc.exited, Bun.sleep(5_000).then(() => null)])) ===
		null
	) {
		proc.kill("SIGKILL");
		await proc.exited;
	}
}
