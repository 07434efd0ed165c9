/**
 * 4. Footprint and scale: the compiled binary watching 50 simulated machines (one sim
 * subprocess) and 10 000 tracked threads. The threads exist on the sims (idle, created over the
 * protocol) and are tracked by writing their rows into the state sqlite before start, as if
 * t3_watch had been called on each. Baseline: the same binary with one machine and no threads.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { config } from "./lib/config.ts";
import { type Fleet, startFleet } from "./lib/fleet.ts";
import { cpuSeconds, peakRssMb, rssMb } from "./lib/proc.ts";
import type { SimRef } from "./lib/rpc.ts";
import { tempDir } from "./lib/server.ts";
import { trackThreads } from "./lib/state.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";
import { startTimed, stopProc } from "./lib/timed-start.ts";

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
