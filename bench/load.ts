/**
 * 6. Load: an open-loop dispatcher issues t3_dispatch at BENCH_DISPATCH_PER_S (new threads,
 * runs of ~2.5 s) while BENCH_LOAD_WAITERS clients each t3_wait on the next dispatched thread,
 * for BENCH_LOAD_S. Correct = every dispatch answers with a thread id and every wait returns
 * `completed` for that thread. Baseline: the same dispatch on the idle server before the window.
 */
import type { Client } from "@modelcontextprotocol/client";
import { config } from "./lib/config.ts";
import { call, connectMcp } from "./lib/mcp.ts";
import { cpuSeconds } from "./lib/proc.ts";
import { allOnline, metric, startBinary, until } from "./lib/server.ts";
import { startSims } from "./lib/sims.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";

const SIMS = 5;

export async function benchLoad(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const group = await startSims(SIMS, { stepMs: 300 });
	const server = await startBinary({ machines: group.refs });
	const dispatcher = await connectMcp(server.mcpUrl);
	const waiters: Client[] = [];
	try {
		await until(() => allOnline(server.url), 10_000, "machines online");
		for (let i = 0; i < config.loadWaiters; i++)
			waiters.push(await connectMcp(server.mcpUrl));
		let n = 0;
		const dispatch = async () => {
			const machine = group.refs[n++ % SIMS]?.name;
			const t0 = performance.now();
			const d = await call<{ thread_id: string }>(dispatcher, "t3_dispatch", {
				machine,
				project: "demo",
				prompt: `hello ${n}`,
			});
			return { threadId: d.thread_id, ms: performance.now() - t0 };
		};
		const idle: number[] = [];
		for (let i = 0; i < 20; i++) idle.push((await dispatch()).ms);

		const queue: string[] = [];
		const dispatchMs: number[] = [];
		const errors: string[] = [];
		let waitsOk = 0;
		let waitsBad = 0;
		let dispatched = 0;
		let windowOver = false;
		const inflight: Promise<void>[] = [];
		const waits = waiters.map(async (client) => {
			for (;;) {
				const threadId = queue.shift();
				if (threadId === undefined) {
					if (windowOver && inflight.length === dispatched) {
						await Promise.all(inflight);
						if (queue.length === 0) return;
					}
					await Bun.sleep(5);
					continue;
				}
				try {
					const r = await call<{ thread_id: string; outcome: string }>(
						client,
						"t3_wait",
						{ thread_id: threadId, timeout: 60 },
					);
					if (r.outcome === "completed" && r.thread_id === threadId) waitsOk++;
					else {
						waitsBad++;
						errors.push(`wait ${threadId}: ${r.outcome}`);
					}
				} catch (error) {
					waitsBad++;
					errors.push(String(error));
				}
			}
		});
		const concurrency: number[] = [];
		const cpu0 = cpuSeconds(server.pid);
		const t0 = performance.now();
		const end = t0 + config.loadS * 1000;
		let nextSample = t0 + 1000;
		while (performance.now() < end) {
			const due =
				Math.floor(((performance.now() - t0) / 1000) * config.dispatchesPerS) -
				dispatched;
			for (let i = 0; i < due; i++) {
				dispatched++;
				inflight.push(
					dispatch().then(
						(d) => {
							dispatchMs.push(d.ms);
							queue.push(d.threadId);
						},
						(error) => {
							errors.push(String(error));
						},
					),
				);
			}
			if (performance.now() >= nextSample) {
				nextSample += 1000;
				concurrency.push(
					await metric(server.url, "t3code_mcp_waits_in_progress"),
				);
			}
			await Bun.sleep(5);
		}
		const serverCpu =
			(cpuSeconds(server.pid) - cpu0) / ((performance.now() - t0) / 1000);
		windowOver = true;
		await Promise.race([Promise.all(waits), Bun.sleep(90_000)]);
		const d = summarize(dispatchMs);
		const base = summarize(idle);
		const c = summarize(concurrency.slice(3));
		const correct =
			errors.length === 0 &&
			waitsOk === dispatched &&
			dispatchMs.length === dispatched;
		return {
			rows: [
				{
					figure: `6. load: dispatch under ${config.loadWaiters} waiters + ${config.dispatchesPerS}/s, ${config.loadS} s`,
					value: fmtSummary(d),
					baseline: `idle dispatch: ${fmtSummary(base)}`,
					ratio: `p50 ${ratio(d.p50, base.p50)}, p99 ${ratio(d.p99, base.p99)}`,
					target: "p99 reported",
					pass: null,
				},
				{
					figure: "6. load: correctness",
					value: `${dispatched} dispatched, ${waitsOk} waits completed, ${waitsBad} wrong, ${errors.length} errors; waits in progress p50 ${c.p50} (max ${c.max}); server CPU ${(serverCpu * 100).toFixed(0)} %`,
					baseline: "-",
					ratio: "-",
					target: "all correct",
					pass: correct,
				},
			],
			raw: {
				dispatch: d,
				idleDispatch: base,
				dispatched,
				waitsOk,
				waitsBad,
				errors: errors.slice(0, 20),
				waitsInProgress: c,
				serverCpu,
			},
		};
	} finally {
		await Promise.all(
			[dispatcher, ...waiters].map((c) => c.close().catch(() => {})),
		);
		await server.stop();
		await group.stop();
	}
}
