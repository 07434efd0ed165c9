/**
 * 7. `t3_threads` latency at scale: the compiled binary watching 50 simulated machines holding
 * 10 000 threads (bench/lib/sim-fleet.ts), `t3_threads` through MCP for the first page of every
 * thread, a filtered search, and a deep page (cursor). Baseline: `t3_machines` on the same server
 * (a no-op tool call: what any tool costs over MCP).
 */
import { config } from "./lib/config.ts";
import { startFleet } from "./lib/fleet.ts";
import { call, connectMcp } from "./lib/mcp.ts";
import { cpuSeconds } from "./lib/proc.ts";
import { allOnline, startBinary, until } from "./lib/server.ts";
import { fmtSummary, summarize, timed } from "./lib/stats.ts";
import type { Row } from "./lib/table.ts";

export async function benchThreads(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const fleet = await startFleet(config.scaleMachines, config.scaleThreads);
	const server = await startBinary({ machines: fleet.machines });
	const client = await connectMcp(server.mcpUrl);
	try {
		await until(() => allOnline(server.url), 60_000, "every machine online");
		const first = await call<{ threads: unknown[]; next_cursor: string }>(
			client,
			"t3_threads",
			{ limit: 50 },
		);
		if (first.threads.length !== Math.min(50, fleet.threads.length))
			throw new Error(`t3_threads listed ${first.threads.length} threads`);
		const steps = {
			all: () => call(client, "t3_threads", {}),
			query: () => call(client, "t3_threads", { query: "thread 17" }),
			page: () => call(client, "t3_threads", { cursor: first.next_cursor }),
			noop: () => call(client, "t3_machines"),
		};
		const samples = Object.fromEntries(
			Object.keys(steps).map((k) => [k, [] as number[]]),
		) as Record<keyof typeof steps, number[]>;
		for (let i = 0; i < 20; i++)
			for (const step of Object.values(steps)) await step(); // warm-up
		const n = config.overheadSamples;
		for (let i = 0; i < n; i++)
			for (const [name, step] of Object.entries(steps))
				samples[name as keyof typeof steps].push(await timed(step));
		// Connector CPU per call (utime+stime over a run of calls of one kind): unlike wall
		// time, barely moved by whatever else the machine runs.
		const cpuMs: Record<string, number> = {};
		const cpuN = Math.max(50, n);
		// A one-row page: finding a page without shaping and sending 50 rows.
		const one = () => call(client, "t3_threads", { limit: 1 });
		for (const [name, step] of Object.entries({ ...steps, one })) {
			const c0 = cpuSeconds(server.pid);
			for (let i = 0; i < cpuN; i++) await step();
			cpuMs[name] =
				Math.round(((cpuSeconds(server.pid) - c0) * 1000 * 100) / cpuN) / 100;
		}
		const s = {
			all: summarize(samples.all),
			query: summarize(samples.query),
			page: summarize(samples.page),
			noop: summarize(samples.noop),
		};
		const scale = `${fleet.machines.length} machines, ${fleet.threads.length} threads`;
		const row = (figure: string, x: typeof s.all): Row => ({
			figure,
			value: fmtSummary(x),
			baseline: `t3_machines ${fmtSummary(s.noop)}`,
			ratio: `p50 ${(x.p50 / s.noop.p50).toFixed(2)}×`,
			target: "p50 ≤ 5 ms, p99 ≤ 20 ms",
			pass: x.p50 <= 5 && x.p99 <= 20,
		});
		return {
			rows: [
				row(`7. t3_threads first page (${scale})`, s.all),
				row("7. t3_threads query", s.query),
				row("7. t3_threads next page (cursor)", s.page),
			],
			raw: {
				scale: {
					machines: fleet.machines.length,
					threads: fleet.threads.length,
				},
				...s,
				cpu_ms_per_call: cpuMs,
			},
		};
	} finally {
		await client.close().catch(() => {});
		await server.stop();
		await fleet.stop();
	}
}
