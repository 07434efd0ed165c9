/**
 * Subprocess entry for the load benchmark: `bun bench/lib/load-gen.ts SIMS THREADS STEP_MS PROMPTS`
 * starts SIMS simulators with a real server's defaults (shell coalesced in 50 ms windows) and
 * THREADS idle threads, then serves a small control API on loopback and prints one JSON line
 * `{ machines, threads, control }`. Run under `taskset` on its own core, so the simulators and
 * the run generator never share a CPU with the connector.
 *   POST /run?runs_per_s=R&seconds=S   start runs open-loop, round-robin over the threads
 *   GET  /status                        {running, started, failures, shellUpdates, unacked}
 *   GET  /outcomes                      every run's outcome times (sim.runOutcomes())
 */
import {
	connectRpc,
	createIdleThread,
	firstProjectId,
	startRun,
} from "./rpc.ts";
import { startSims } from "./sims.ts";

const simCount = Number(process.argv[2] ?? 10);
const threadCount = Number(process.argv[3] ?? 400);
const stepMs = Number(process.argv[4] ?? 50);
/** Comma-separated prompts used in turn. */
const prompts = (process.argv[5] ?? "hello").split(",");
const group = await startSims(simCount, { stepMs });
const threads: {
	threadId: string;
	machine: string;
	projectId: string;
	rpc: Awaited<ReturnType<typeof connectRpc>>;
}[] = [];
for (const [i, ref] of group.refs.entries()) {
	const rpc = await connectRpc(ref);
	const projectId = await firstProjectId(ref);
	const share =
		Math.floor(threadCount / simCount) + (i < threadCount % simCount ? 1 : 0);
	for (let k = 0; k < share; k++)
		threads.push({
			threadId: await createIdleThread(rpc, projectId, `load ${k}`),
			machine: ref.name,
			projectId,
			rpc,
		});
}

let running = false;
let started = 0;
let failures = 0;

async function generate(runsPerS: number, seconds: number): Promise<void> {
	running = true;
	const t0 = performance.now();
	const end = t0 + seconds * 1000;
	// `started` counts every call's runs (a warm-up, then the measured window).
	const before = started;
	let next = 0;
	while (performance.now() < end) {
		const due = Math.floor(((performance.now() - t0) / 1000) * runsPerS);
		while (started - before < due) {
			const thread = threads[next++ % threads.length];
			if (!thread) break;
			started++;
			startRun(
				thread.rpc,
				thread.threadId,
				prompts[started % prompts.length] as string,
			).catch(() => failures++);
		}
		await Bun.sleep(5);
	}
	running = false;
}

const json = (body: unknown) => Response.json(body);
const control = Bun.serve({
	hostname: "127.0.0.1",
	port: 0,
	fetch(request) {
		const url = new URL(request.url);
		if (request.method === "POST" && url.pathname === "/run") {
			void generate(
				Number(url.searchParams.get("runs_per_s") ?? 100),
				Number(url.searchParams.get("seconds") ?? 10),
			);
			return json({ ok: true });
		}
		if (url.pathname === "/status") {
			let shellUpdates = 0;
			let unacked = 0;
			for (const sim of group.sims) {
				const stats = sim.stats();
				shellUpdates += stats.shellUpdates;
				unacked += stats.unackedChunks;
			}
			return json({ running, started, failures, shellUpdates, unacked });
		}
		if (url.pathname === "/outcomes")
			return json(group.sims.flatMap((s) => s.runOutcomes()));
		return new Response("not found", { status: 404 });
	},
});

process.stdout.write(
	`${JSON.stringify({
		machines: group.refs,
		threads: threads.map(({ rpc: _, ...t }) => t),
		control: `http://127.0.0.1:${control.port}`,
	})}\n`,
);

const stop = async () => {
	control.stop(true);
	for (const t of threads) t.rpc.close();
	await group.stop();
	process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
