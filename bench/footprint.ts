/**
 * 4. Footprint and scale: the compiled binary watching 50 simulated machines (one sim
 * subprocess) and 10 000 tracked threads. The threads exist on the sims (idle, created over the
 * protocol) and are tracked by writing their rows into the state sqlite before start, as if
 * t3_watch had been called on each. Baseline: the same binary with one machine and no threads.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../test/helpers/process.ts";
import { config } from "./lib/config.ts";
import { type Fleet, startFleet } from "./lib/fleet.ts";
import { cpuSeconds, peakRssMb, rssMb } from "./lib/proc.ts";
import type { SimRef } from "./lib/rpc.ts";
import { allOnline, BINARY, tempDir, until } from "./lib/server.ts";
import { trackThreads } from "./lib/state.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";

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

interface Started {
	proc: ReturnType<typeof Bun.spawn>;
	url: string;
	startMs: number;
	onlineMs: number;
}

/** Spawn → first /healthz 200 (polled every ms) → every machine online (polled every 5 ms). */
async function startTimed(
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
	await until(() => allOnline(url), 60_000, "every machine online", 5);
	return { proc, url, startMs, onlineMs: performance.now() - t0 };
}

async function stopProc(proc: Started["proc"]): Promise<void> {
	proc.kill("SIGTERM");
	if (
		(await Promise.race([proc.exited, Bun.sleep(5_000).then(() => null)])) ===
		null
	) {
		proc.kill("SIGKILL");
		await proc.exited;
	}
}

async function idleCpuPercent(pid: number, seconds: number): Promise<number> {
	const c0 = cpuSeconds(pid);
	const t0 = performance.now();
	await Bun.sleep(seconds * 1000);
	return (
		Math.round(
			((cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000)) * 1000,
		) / 10
	);
}

/** Starts `runs` times on the same state; the last run stays up for the memory and CPU readings. */
async function measure(
	machines: SimRef[],
	threads: Fleet["threads"],
	runs: number,
) {
	const dir = tempDir();
	const statePath = join(dir, "state.sqlite");
	trackThreads(statePath, threads);
	const starts: number[] = [];
	const onlines: number[] = [];
	try {
		for (let i = 0; i < runs; i++) {
			const s = await startTimed(dir, statePath, machines);
			starts.push(s.startMs);
			onlines.push(s.onlineMs);
			if (i < runs - 1) {
				await stopProc(s.proc);
				continue;
			}
			const pid = s.proc.pid;
			const rssOnline = rssMb(pid);
			await Bun.sleep(3_000); // catch-up evaluation of every tracked thread, then GC
			const rssSettled = rssMb(pid);
			const cpu = await idleCpuPercent(pid, config.idleCpuS);
			const rssAfterIdle = rssMb(pid);
			const peak = peakRssMb(pid);
			await stopProc(s.proc);
			return {
				starts: summarize(starts),
				onlines: summarize(onlines),
				firstStartMs: starts[0],
				firstOnlineMs: onlines[0],
				rssOnline,
				rssSettled,
				rssAfterIdle,
				peak,
				cpu,
			};
		}
		throw new Error("no runs");
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

export async function benchFootprint(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const fleet = await startFleet(config.scaleMachines, config.scaleThreads);
	try {
		const base = await measure(
			fleet.machines.slice(0, 1),
			[],
			config.startRuns,
		);
		const full = await measure(fleet.machines, fleet.threads, config.startRuns);
		const scale = `${fleet.machines.length} machines, ${fleet.threads.length} threads`;
		const rss = Math.max(full.rssOnline, full.rssSettled, full.rssAfterIdle);
		return {
			rows: [
				{
					figure: `4. RSS (${scale})`,
					value: `online ${full.rssOnline} / settled ${full.rssSettled} / after idle ${full.rssAfterIdle} MB (peak ${full.peak})`,
					baseline: `1 machine, 0 threads: ${base.rssSettled} MB (peak ${base.peak})`,
					ratio: ratio(full.rssSettled, base.rssSettled),
					target: "≤ 100 MB",
					pass: rss <= 100,
				},
				{
					figure: "4. CPU at idle",
					value: `${full.cpu} % of a core over ${config.idleCpuS} s`,
					baseline: `${base.cpu} %`,
					ratio: ratio(full.cpu, base.cpu),
					target: "-",
					pass: null,
				},
				{
					figure: "4. start → /healthz 200",
					value: `${fmtSummary(full.starts)}; first ${full.firstStartMs?.toFixed(1)} ms`,
					baseline: `1 machine: ${fmtSummary(base.starts)}`,
					ratio: `p50 ${ratio(full.starts.p50, base.starts.p50)}`,
					target: "≤ 150 ms",
					pass: full.starts.max <= 150,
				},
				{
					figure: "4. start → every machine online",
					value: `${fmtSummary(full.onlines)}; first ${full.firstOnlineMs?.toFixed(1)} ms`,
					baseline: `1 machine: ${fmtSummary(base.onlines)}`,
					ratio: `p50 ${ratio(full.onlines.p50, base.onlines.p50)}`,
					target: "-",
					pass: null,
				},
			],
			raw: {
				scale: {
					machines: fleet.machines.length,
					threads: fleet.threads.length,
					tracking: "rows written to the state sqlite before start",
				},
				full,
				baseline: base,
			},
		};
	} finally {
		await fleet.stop();
	}
}
