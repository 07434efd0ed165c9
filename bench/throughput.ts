/**
 * 5. Throughput under load: the simulators and the run generator run in their own process
 * pinned to CPU 0 (`lib/load-gen.ts`, taskset), the connector pinned to CPU 1, this process
 * (MCP-free: only the webhook receiver and the samplers) unpinned. Runs are started straight on
 * the sims in threads the connector tracks (rows written before start), at a rate giving about
 * BENCH_UPDATES_PER_S shell updates/s with ~11 % of them terminal, for BENCH_THROUGHPUT_S. The
 * sims keep a real server's defaults (shell coalesced in 50 ms windows), so the connector follows
 * the busy threads on their own streams. Checks: every run's event delivered, outbox pending
 * bounded (sampled each second), event latency from the first frame showing the outcome
 * (`sim.runOutcomes`, wall clock, so comparable across processes) p99 ≤ 50 ms; CPU per process.
 */
import { join } from "node:path";
import type { RunOutcomeTimes } from "../src/sim/index.ts";
import { config } from "./lib/config.ts";
import { spawnReporting } from "./lib/fleet.ts";
import { cpuSeconds, peakRssMb, rssMb } from "./lib/proc.ts";
import { startTimedReceiver } from "./lib/receiver.ts";
import type { SimRef } from "./lib/rpc.ts";
import {
	allOnline,
	health,
	startBinary,
	tempDir,
	until,
} from "./lib/server.ts";
import { type TrackedThread, trackThreads } from "./lib/state.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import type { Row } from "./lib/table.ts";
import { HOOK_SECRET } from "./wake.ts";

/** `BENCH_LOAD_MACHINES` (default 10): the same load spread over a whole fleet's machines. */
const SIMS = config.loadMachines;
const THREADS = 400;
/**
 * At 60 ms steps and 50 ms windows a "slow" run (a streamed answer) shows in 11 shell updates
 * and a "hello" run in 7: alternating them gives 9 per run, one of them terminal (11 %).
 */
const STEP_MS = 60;
const PROMPTS = "slow,hello";
/** Terminal share of shell updates the rate is sized for (one terminal update per run). */
const SHARE = 0.11;
/**
 * The connector's peak RSS (VmHWM, warm-up included) allowed under this load: 128 MB for the
 * default 10 machines; spread over a fleet of 500, 160 (issue 27).
 */
const RSS_PEAK_MB = SIMS > 10 ? 160 : 128;
/** How far apart two processes' `wallMs` may be (src/sim/wall-clock.ts). */
const CLOCK_TOLERANCE_MS = 1;

interface Status {
	running: boolean;
	started: number;
	failures: number;
	shellUpdates: number;
	unacked: number;
}

export async function benchThroughput(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const receiver = startTimedReceiver();
	const gen = await spawnReporting<{
		machines: SimRef[];
		threads: TrackedThread[];
		control: string;
	}>([
		"taskset",
		"-c",
		"0",
		process.execPath,
		new URL("lib/load-gen.ts", import.meta.url).pathname,
		String(SIMS),
		String(THREADS),
		String(STEP_MS),
		PROMPTS,
	]);
	const { machines, threads, control } = gen.value;
	const status = async () =>
		(await (await fetch(`${control}/status`)).json()) as Status;
	const dir = tempDir();
	trackThreads(join(dir, "state.sqlite"), threads);
	const server = await startBinary({
		machines,
		dir,
		cpu: 1,
		env: {
			T3CODE_MCP_HOOK_URL: receiver.url,
			T3CODE_MCP_HOOK_SECRET: HOOK_SECRET,
		},
	});
	try {
		await until(() => allOnline(server.url), 60_000, "machines online");
		await Bun.sleep(500); // catch-up of the freshly tracked threads
		const runsPerS = config.updatesPerS * SHARE;
		// Warm-up: the same load, unmeasured, until all of it is delivered. A long-running
		// server's JIT has compiled its hot code and its WAL no longer grows (lib/wal.ts).
		const warmRuns = new Set<string>();
		if (config.throughputWarmS > 0) {
			await fetch(
				`${control}/run?runs_per_s=${runsPerS}&seconds=${config.throughputWarmS}`,
				{ method: "POST" },
			);
			await until(
				async () => {
					const st = await status();
					if (st.running) return false;
					const outs = (await (
						await fetch(`${control}/outcomes`)
					).json()) as RunOutcomeTimes[];
					if (outs.length < st.started) return false;
					for (const o of outs) warmRuns.add(o.runId);
					return (await health(server.url)).outbox.pending === 0;
				},
				60_000 + config.throughputWarmS * 1000,
				"warm-up load delivered",
				200,
			);
		}
		const s0 = await status();
		const received0 = receiver.received.length;
		const cpu0 = {
			server: cpuSeconds(server.pid),
			gen: cpuSeconds(gen.proc.pid),
			bench: cpuSeconds(process.pid),
		};
		await fetch(
			`${control}/run?runs_per_s=${runsPerS}&seconds=${config.throughputS}`,
			{ method: "POST" },
		);
		const t0 = performance.now();
		const pending: {
			t: number;
			pending: number;
			unacked: number;
			rssMb: number;
		}[] = [];
		let s = s0;
		for (;;) {
			await Bun.sleep(1000 - ((performance.now() - t0) % 1000));
			const [h, now] = await Promise.all([health(server.url), status()]);
			s = now;
			pending.push({
				t: Math.round(performance.now() - t0),
				pending: h.outbox.pending,
				unacked: s.unacked,
				rssMb: rssMb(server.pid),
			});
			if (!s.running && performance.now() - t0 >= config.throughputS * 1000)
				break;
		}
		const windowS = (performance.now() - t0) / 1000;
		const pct = (a: number, b: number) => Math.round(((a - b) / windowS) * 100);
		const cpu = {
			server: pct(cpuSeconds(server.pid), cpu0.server),
			simsAndGenerator: pct(cpuSeconds(gen.proc.pid), cpu0.gen),
			bench: pct(cpuSeconds(process.pid), cpu0.bench),
		};
		const updates = s.shellUpdates - s0.shellUpdates;
		const started = s.started - s0.started;
		// Drain: the last runs end, and every run's event arrives.
		const drainStart = performance.now();
		let outcomes: RunOutcomeTimes[] = [];
		const delivered = () =>
			new Set(
				receiver.received
					.slice(received0)
					.filter((r) => r.body.type !== "thread.question")
					.map((r) => r.body.run_id),
			);
		await until(
			async () => {
				outcomes = (
					(await (
						await fetch(`${control}/outcomes`)
					).json()) as RunOutcomeTimes[]
				).filter((o) => !warmRuns.has(o.runId));
				return (
					outcomes.length >= started &&
					delivered().size >= outcomes.length &&
					(await health(server.url)).outbox.pending === 0
				);
			},
			60_000,
			"every run delivered",
			200,
		).catch(() => {});
		const drainMs = performance.now() - drainStart;
		const byRun = new Map(outcomes.map((o) => [o.runId, o]));
		const got = delivered();
		const latency: number[] = [];
		const fromEnd: number[] = [];
		const via = { thread: 0, shell: 0, http: 0 };
		for (const r of receiver.received.slice(received0)) {
			const o = r.body.run_id ? byRun.get(r.body.run_id) : undefined;
			if (!o || o.sentAt === undefined || !o.via) continue;
			latency.push(r.at - o.sentAt);
			fromEnd.push(r.at - o.endedAt);
			via[o.via]++;
		}
		// The floor is the first moment anything showed the outcome, so nothing arrives before
		// it; a negative latency means a way out the sim does not record (or clocks disagreeing
		// by more than the ~1 ms wallMs allows).
		const early = latency.filter((l) => l < -CLOCK_TOLERANCE_MS).length;
		const missing = outcomes.filter((o) => !got.has(o.runId)).length;
		const duplicates =
			receiver.received.length -
			received0 -
			new Set(receiver.received.slice(received0).map((r) => r.body.id)).size;
		const lat = summarize(latency);
		const end = summarize(fromEnd);
		const rate = updates / windowS;
		const share = outcomes.length / Math.max(1, updates);
		const half = Math.floor(pending.length / 2);
		const mean = (xs: { pending: number }[]) =>
			xs.reduce((sum, p) => sum + p.pending, 0) / Math.max(1, xs.length);
		const firstHalf = mean(pending.slice(0, half));
		const secondHalf = mean(pending.slice(half));
		const maxPending = Math.max(0, ...pending.map((p) => p.pending));
		// RSS under load: a leak trends upward like a backlog does.
		const meanRss = (xs: { rssMb: number }[]) =>
			xs.reduce((sum, p) => sum + p.rssMb, 0) / Math.max(1, xs.length);
		const rss = {
			firstHalfMb: meanRss(pending.slice(0, half)),
			secondHalfMb: meanRss(pending.slice(half)),
			lastMb: pending.at(-1)?.rssMb ?? 0,
			peakMb: peakRssMb(server.pid),
		};
		// A growing backlog trends upward without limit, raising the second half's mean; a
		// one-second spike (a slow fsync on a shared disk) barely moves it.
		const bounded =
			secondHalf <= firstHalf * 2 + 5 &&
			maxPending <= Math.max(10, Math.round(runsPerS));
		const all = missing === 0 && outcomes.length >= started && s.failures === 0;
		return {
			rows: [
				{
					figure: `5. load: ${config.throughputS} s, ${SIMS} machines, sims+generator on CPU 0, connector on CPU 1`,
					value: `${rate.toFixed(0)} shell updates/s, ${(share * 100).toFixed(1)} % terminal; ${got.size}/${outcomes.length} events delivered (${duplicates} duplicate deliveries), drain ${drainMs.toFixed(0)} ms`,
					baseline: `target ${config.updatesPerS}/s; CPU: connector ${cpu.server} %, sims+generator ${cpu.simsAndGenerator} %, bench ${cpu.bench} %`,
					ratio: `${(rate / config.updatesPerS).toFixed(2)}×`,
					target: "all delivered",
					pass: all,
				},
				{
					figure: "5. load: outbox pending (1 s samples)",
					value: `max ${maxPending}; mean 1st half ${firstHalf.toFixed(1)}, 2nd half ${secondHalf.toFixed(1)}; sim unacked max ${Math.max(0, ...pending.map((p) => p.unacked))}`,
					baseline: "-",
					ratio: "-",
					target: "bounded: 2nd half mean ≤ 2 × 1st + 5, max ≤ 1 s of runs",
					pass: bounded,
				},
				{
					figure: "5. load: connector RSS (1 s samples)",
					value: `mean 1st half ${rss.firstHalfMb.toFixed(0)} MB, 2nd half ${rss.secondHalfMb.toFixed(0)} MB; last ${rss.lastMb.toFixed(0)} MB, peak ${rss.peakMb.toFixed(0)} MB`,
					baseline: "-",
					ratio: "-",
					target: `peak ≤ ${RSS_PEAK_MB} MB`,
					pass: rss.peakMb <= RSS_PEAK_MB,
				},
				{
					figure: "5. load: event latency from the first outcome frame",
					value: `${fmtSummary(lat)}; ${early} before the floor`,
					baseline: `from run completion: ${fmtSummary(end)}`,
					ratio: `first shown on thread stream ${via.thread}, shell ${via.shell}, HTTP read ${via.http}`,
					target: "p99 ≤ 50 ms",
					pass: lat.p99 <= 50 && early === 0,
				},
			],
			raw: {
				cpuPercent: cpu,
				windowS,
				updates,
				rate,
				share,
				started,
				failures: s.failures,
				outcomes: outcomes.length,
				delivered: got.size,
				missing,
				duplicates,
				drainMs,
				latency: lat,
				latencyFromCompletion: end,
				via,
				early,
				pending,
				rss,
				warmUpS: config.throughputWarmS,
				warmUpRuns: warmRuns.size,
			},
		};
	} finally {
		await server.stop();
		await gen.stop();
		receiver.stop();
	}
}
