/**
 * 8. Scale: the cost curve of one instance. At three sizes (by default 50 / 10 000, 200 / 50 000
 * and 500 / 100 000 machines / threads; `BENCH_MACHINES` / `BENCH_THREADS` set the largest, the
 * others are a tenth and two fifths of its machines, a tenth and half of its threads) the
 * compiled binary starts on a state file tracking every thread (as footprint does), is timed to
 * every machine online `BENCH_SCALE_STARTS` times (largest size first, alone) and left running;
 * then the three answer `t3_machines` and `t3_threads` (first page, query, next page) through
 * MCP, in turns of ten rounds a size so the VM's drift lands on every size alike. RSS is read
 * 3 s after every machine is online (settled, before any call), after the calls, and as VmHWM.
 * The slope is fitted (least squares) to the settled RSS of the three sizes and of an extra
 * point (the largest size's machines, a tenth of its threads, which answers the same calls: its
 * peak is what the fleet itself costs):
 * RSS = base + per machine × machines + per thread × threads, and `t3_threads` growth per
 * 10 000 threads. Selected with `BENCH_ONLY=scale`; not part of the default run (it adds
 * about a minute and a half: 160 000 threads created, three servers started three times).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { config } from "./lib/config.ts";
import { startFleet } from "./lib/fleet.ts";
import { call, connectMcp } from "./lib/mcp.ts";
import { peakRssMb, rssMb } from "./lib/proc.ts";
import { tempDir } from "./lib/server.ts";
import { trackThreads } from "./lib/state.ts";
import { fmtSummary, type Summary, summarize, timed } from "./lib/stats.ts";
import type { Row } from "./lib/table.ts";
import { type Started, startTimed, stopProc } from "./lib/timed-start.ts";

export interface SizeResult {
	machines: number;
	threads: number;
	online: Summary;
	/** 3 s after every machine is online, before any call. */
	rssSettledMb: number;
	rssAfterCallsMb: number;
	/** VmHWM over start and settling: the start's own peak. */
	rssPeakBeforeCallsMb: number;
	/** VmHWM over start, settling and the calls. */
	rssPeakMb: number;
	t3Machines: Summary;
	first: Summary;
	query: Summary;
	next: Summary;
}

const STEPS = ["t3Machines", "first", "query", "next"] as const;
type Step = (typeof STEPS)[number];

/** One size brought up and settled: its fleet, its server and an MCP client on it. */
interface Running {
	machines: number;
	threads: number;
	onlines: number[];
	rssHeldMb: number;
	peakBeforeCallsMb: number;
	proc: Started["proc"];
	steps: Record<Step, () => Promise<unknown>>;
	close(): Promise<void>;
}

/**
 * Starts a size's simulators and the binary on a state file tracking every thread, times
 * `starts` starts to every machine online, and leaves the last one running,
 * settled, with a client connected.
 */
async function bringUp(
	machineCount: number,
	threadCount: number,
	starts = config.scaleStarts,
): Promise<Running> {
	process.stderr.write(
		`  scale ${machineCount} machines, ${threadCount} threads…\n`,
	);
	const fleet = await startFleet(machineCount, threadCount);
	const dir = tempDir();
	const statePath = join(dir, "state.sqlite");
	const cleanUp = async () => {
		rmSync(dir, { recursive: true, force: true });
		await fleet.stop();
	};
	let s: Started | undefined;
	let client: Client | undefined;
	try {
		trackThreads(statePath, fleet.threads);
		const onlines: number[] = [];
		for (let i = 0; i < starts - 1; i++) {
			const started = await startTimed(dir, statePath, fleet.machines);
			onlines.push(started.onlineMs);
			await stopProc(started.proc);
		}
		s = await startTimed(dir, statePath, fleet.machines);
		onlines.push(s.onlineMs);
		// What holding them costs: the catch-up of every tracked thread done and collected, before
		// any call (calls add a steady ~30 MB of their own: JIT code, allocator pools).
		await Bun.sleep(3_000);
		const rssHeldMb = rssMb(s.proc.pid);
		const peakBeforeCallsMb = peakRssMb(s.proc.pid);
		const mcp = await connectMcp(`${s.url}/mcp`);
		client = mcp;
		const first = await call<{ threads: unknown[]; next_cursor: string }>(
			mcp,
			"t3_threads",
			{ limit: 50 },
		);
		if (first.threads.length !== Math.min(50, threadCount))
			throw new Error(`t3_threads listed ${first.threads.length} threads`);
		const proc = s.proc;
		return {
			machines: machineCount,
			threads: threadCount,
			onlines,
			rssHeldMb,
			peakBeforeCallsMb,
			proc,
			steps: {
				t3Machines: () => call(mcp, "t3_machines"),
				first: () => call(mcp, "t3_threads", { limit: 50 }),
				query: () => call(mcp, "t3_threads", { query: "thread 17", limit: 50 }),
				next: () => call(mcp, "t3_threads", { cursor: first.next_cursor }),
			},
			async close() {
				await mcp.close().catch(() => {});
				await stopProc(proc);
				await cleanUp();
			},
		};
	} catch (error) {
		await client?.close().catch(() => {});
		if (s) await stopProc(s.proc);
		await cleanUp();
		throw error;
	}
}

/** Rounds in a row on one size: a process's caches warm, yet the sizes take turns often. */
const BLOCK_ROUNDS = 10;

/**
 * The calls of every size in turns of `BLOCK_ROUNDS` rounds (each round: every step once), so
 * that the VM's speed drifting over a minute (~1.7× here between runs of the same binary) moves
 * every size alike instead of landing on one and showing up as the spread. Turns, not single
 * calls: a call on another server each time found its caches cold (`t3_machines` at 500
 * machines 3.3–4.2 ms against 1.6–2.6 alone).
 */
async function measureCalls(running: Running[]): Promise<SizeResult[]> {
	const samples = running.map(
		() =>
			Object.fromEntries(STEPS.map((k) => [k, [] as number[]])) as Record<
				Step,
				number[]
			>,
	);
	for (const r of running)
		for (let i = 0; i < 20; i++)
			for (const step of STEPS) await r.steps[step](); // warm-up
	for (let from = 0; from < config.scaleSamples; from += BLOCK_ROUNDS)
		for (const [k, r] of running.entries()) {
			const to = Math.min(from + BLOCK_ROUNDS, config.scaleSamples);
			for (let i = from; i < to; i++)
				for (const step of STEPS)
					samples[k]?.[step].push(await timed(r.steps[step]));
		}
	return running.map((r, k) => {
		const own = samples[k] as Record<Step, number[]>;
		return {
			machines: r.machines,
			threads: r.threads,
			online: summarize(r.onlines),
			rssSettledMb: r.rssHeldMb,
			rssAfterCallsMb: rssMb(r.proc.pid),
			rssPeakBeforeCallsMb: r.peakBeforeCallsMb,
			rssPeakMb: peakRssMb(r.proc.pid),
			t3Machines: summarize(own.t3Machines),
			first: summarize(own.first),
			query: summarize(own.query),
			next: summarize(own.next),
		};
	});
}

/** Solves a 3×3 linear system (Cramer's rule); null when the sizes do not pin it down. */
function solve3(a: number[][], b: number[]): number[] | null {
	const det = (m: number[][]) => {
		const x = (i: number, j: number) => m[i]?.[j] ?? 0;
		return (
			x(0, 0) * (x(1, 1) * x(2, 2) - x(1, 2) * x(2, 1)) -
			x(0, 1) * (x(1, 0) * x(2, 2) - x(1, 2) * x(2, 0)) +
			x(0, 2) * (x(1, 0) * x(2, 1) - x(1, 1) * x(2, 0))
		);
	};
	const d = det(a);
	if (Math.abs(d) < 1e-9) return null;
	return [0, 1, 2].map(
		(col) =>
			det(a.map((row, i) => row.map((x, j) => (j === col ? (b[i] ?? 0) : x)))) /
			d,
	);
}

/** Memory per machine and per thread (KB), and how `t3_threads` grows, from the sizes. */
export function costCurve(
	sizes: SizeResult[],
	extra: { machines: number; threads: number; rssSettledMb: number }[] = [],
) {
	// Least squares over every point: the three sizes hold ~200 threads a machine each, so on
	// their own machines and threads move together and the split between them swung 22–85 KB a
	// machine between runs; a point with the most machines and the fewest threads pins it.
	const points = [...sizes, ...extra];
	// Columns in hundreds of machines and ten thousands of threads: a well-scaled system.
	const rows = points.map((p) => [1, p.machines / 100, p.threads / 10_000]);
	const rss = points.map((p) => p.rssSettledMb * 1024);
	const normal = [0, 1, 2].map((i) =>
		[0, 1, 2].map((j) =>
			rows.reduce((sum, r) => sum + (r[i] ?? 0) * (r[j] ?? 0), 0),
		),
	);
	const rhs = [0, 1, 2].map((i) =>
		rows.reduce((sum, r, k) => sum + (r[i] ?? 0) * (rss[k] ?? 0), 0),
	);
	const fit = points.length >= 3 ? solve3(normal, rhs) : null;
	const p50s = sizes.flatMap((s) => [s.first.p50, s.query.p50, s.next.p50]);
	const small = sizes[0];
	const large = sizes.at(-1);
	const per10k = (pick: (s: SizeResult) => number) =>
		small && large && large.threads > small.threads
			? Math.round(
					((pick(large) - pick(small)) /
						((large.threads - small.threads) / 10_000)) *
						1000,
				) / 1000
			: null;
	return {
		baseKb: fit ? Math.round(fit[0] ?? 0) : null,
		perMachineKb: fit ? Math.round(((fit[1] ?? 0) / 100) * 10) / 10 : null,
		perThreadKb: fit
			? Math.round(((fit[2] ?? 0) / 10_000) * 1000) / 1000
			: null,
		/** Largest ÷ smallest `t3_threads` p50 over every size and kind of page. */
		threadsSpread:
			Math.round((Math.max(...p50s) / Math.min(...p50s)) * 100) / 100,
		firstMsPer10kThreads: per10k((s) => s.first.p50),
		queryMsPer10kThreads: per10k((s) => s.query.p50),
	};
}

export function scaleSizes(): [number, number][] {
	const m = config.scaleTopMachines;
	const t = config.scaleTopThreads;
	return [
		[Math.max(1, Math.round(m / 10)), Math.round(t / 10)],
		[Math.max(1, Math.round((m * 2) / 5)), Math.round(t / 2)],
		[m, t],
	];
}

/** The curve's extra point: the largest size's machines with a tenth of its threads. */
export function fitPoint(): [number, number] {
	return [config.scaleTopMachines, Math.round(config.scaleTopThreads / 10)];
}

export async function benchScale(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	// Largest first: its start is timed against the goal with no other size running yet (the
	// smaller ones then start beside it, idle); then the calls of all three, taking turns.
	const running: Running[] = [];
	let sizes: SizeResult[];
	// The curve's extra point (most machines, fewest threads), with the same calls: its settled
	// RSS pins the curve, and its peak is what the fleet costs with few threads (the floor a
	// thread store has to fit under).
	const [fm, ft] = fitPoint();
	const alone = await bringUp(fm, ft, 1);
	let floor: SizeResult;
	try {
		[floor] = (await measureCalls([alone])) as [SizeResult];
	} finally {
		await alone.close();
	}
	const extra = [
		{ machines: fm, threads: ft, rssSettledMb: floor.rssSettledMb },
	];
	try {
		for (const [m, t] of [...scaleSizes()].reverse())
			running.unshift(await bringUp(m, t));
		sizes = await measureCalls(running);
	} finally {
		for (const r of running) await r.close();
	}
	const curve = costCurve(sizes, extra);
	const top = sizes.at(-1) as SizeResult;
	const replies =
		config.messageChars > 0 ? ` (${config.messageChars}-char replies)` : "";
	const at = (s: SizeResult) => `${s.machines} / ${s.threads}${replies}`;
	const sizeRows: Row[] = [...sizes, floor].map((s) => ({
		figure: `8. scale ${at(s)}${s === floor ? " (the largest fleet, a tenth of its threads)" : ""}: RSS, t3_threads p50`,
		value: `RSS settled ${s.rssSettledMb} MB, after calls ${s.rssAfterCallsMb} MB, peak ${s.rssPeakMb} MB (start ${s.rssPeakBeforeCallsMb}); t3_threads first ${s.first.p50.toFixed(2)} / query ${s.query.p50.toFixed(2)} / next ${s.next.p50.toFixed(2)} ms; t3_machines ${s.t3Machines.p50.toFixed(2)} ms; online p50 ${s.online.p50.toFixed(0)} ms`,
		baseline: "-",
		ratio: "-",
		target: "reported",
		pass: null,
	}));
	const topRow = (
		figure: string,
		value: string,
		target: string,
		pass: boolean,
	): Row => ({
		figure: `8. scale ${at(top)}: ${figure}`,
		value,
		baseline: "-",
		ratio: "-",
		target,
		pass,
	});
	const pageOk = (x: Summary) => x.p50 <= 5;
	return {
		rows: [
			...sizeRows,
			topRow(
				"RSS peak",
				`${top.rssPeakMb} MB (settled ${top.rssSettledMb})`,
				"≤ 128 MB",
				top.rssPeakMb <= 128,
			),
			topRow(
				"t3_machines",
				fmtSummary(top.t3Machines),
				"p50 ≤ 3 ms",
				top.t3Machines.p50 <= 3,
			),
			topRow(
				"t3_threads first / query / next",
				`p50 ${top.first.p50.toFixed(2)} / ${top.query.p50.toFixed(2)} / ${top.next.p50.toFixed(2)} ms`,
				"p50 ≤ 5 ms each",
				pageOk(top.first) && pageOk(top.query) && pageOk(top.next),
			),
			topRow(
				"start → every machine online",
				fmtSummary(top.online),
				"p50 ≤ 2 s",
				top.online.p50 <= 2000,
			),
			{
				figure: "8. scale: cost curve",
				value: `${curve.perThreadKb} KB per thread, ${curve.perMachineKb} KB per machine (base ${curve.baseKb} KB); t3_threads spread ${curve.threadsSpread}×, first page +${curve.firstMsPer10kThreads} ms per 10 000 threads`,
				baseline: "-",
				ratio: "-",
				target: "≤ 1 KB/thread, ≤ 60 KB/machine, spread ≤ 1.5×",
				pass:
					curve.perThreadKb !== null &&
					curve.perMachineKb !== null &&
					curve.perThreadKb <= 1 &&
					curve.perMachineKb <= 60 &&
					curve.threadsSpread <= 1.5,
			},
		],
		raw: { sizes, floor, extra, curve },
	};
}
