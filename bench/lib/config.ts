/**
 * Bench knobs, all from the environment so a CI box or a laptop can scale them. `BENCH_QUICK=1`
 * is a ~30 s smoke run; `BENCH_ONLY=wake,overhead` runs a subset (names as in index.ts).
 */
const env = process.env;
export const quick = env.BENCH_QUICK === "1";

function num(name: string, full: number, smoke: number): number {
	const raw = env[name];
	if (raw === undefined || raw === "") return quick ? smoke : full;
	const n = Number(raw);
	if (!Number.isFinite(n) || n < 0)
		throw new Error(`${name} must be a number, got "${raw}"`);
	return n;
}

export const config = {
	quick,
	only: env.BENCH_ONLY
		? env.BENCH_ONLY.split(",").map((s) => s.trim())
		: undefined,
	/** Force `bun run build` even when dist/t3code-mcp exists. */
	rebuild: env.BENCH_BUILD === "1",
	wakeSamples: num("BENCH_WAKE_N", 200, 30),
	pollSamples: num("BENCH_POLL_N", 40, 8),
	overheadSamples: num("BENCH_OVERHEAD_N", 400, 60),
	healthzSamples: num("BENCH_HEALTHZ_N", 200, 40),
	scaleMachines: num("BENCH_MACHINES", 50, 50),
	scaleThreads: num("BENCH_THREADS", 10_000, 2_000),
	/** The scale bench's largest size (its others are fractions of it: bench/scale.ts). */
	scaleTopMachines: num("BENCH_MACHINES", 500, 100),
	scaleTopThreads: num("BENCH_THREADS", 100_000, 10_000),
	scaleStarts: num("BENCH_SCALE_STARTS", 3, 1),
	/** Each seeded idle thread's latest reply, in characters (0: none, as the newest T3 shows). */
	messageChars: num("BENCH_MESSAGE_CHARS", 0, 0),
	scaleSamples: num("BENCH_SCALE_N", 100, 20),
	idleCpuS: num("BENCH_IDLE_S", 10, 3),
	startRuns: num("BENCH_START_N", 5, 2),
	throughputS: num("BENCH_THROUGHPUT_S", 60, 5),
	/** The same load first, unmeasured: a long-running server's JIT, heap and WAL are warm. */
	throughputWarmS: num("BENCH_THROUGHPUT_WARM_S", 10, 2),
	updatesPerS: num("BENCH_UPDATES_PER_S", 1_000, 1_000),
	/** Machines the load bench spreads its runs over (`BENCH_ONLY=throughput` at 500: issue 27). */
	loadMachines: num("BENCH_LOAD_MACHINES", 10, 10),
	loadS: num("BENCH_LOAD_S", 60, 5),
	loadWaiters: num("BENCH_LOAD_WAITERS", 50, 50),
	dispatchesPerS: num("BENCH_DISPATCH_PER_S", 20, 20),
};
