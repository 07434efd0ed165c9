/**
 * 3. Tool overhead: `t3_thread` through MCP against what it cannot avoid, a no-op tool call on
 * the same server (`t3_machines`, memory only) plus the same thread read straight from the
 * simulator over HTTP. Samples are interleaved so drift hits all three alike.
 */
import { config } from "./lib/config.ts";
import { call, connectMcp } from "./lib/mcp.ts";
import { allOnline, startBinary, until } from "./lib/server.ts";
import { startSims } from "./lib/sims.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import type { Row } from "./lib/table.ts";

async function timed(fn: () => Promise<unknown>): Promise<number> {
	const t0 = performance.now();
	await fn();
	return performance.now() - t0;
}

export async function benchOverhead(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const group = await startSims(1, { stepMs: 1, coalesceMs: 0 });
	const server = await startBinary({ machines: group.refs });
	const client = await connectMcp(server.mcpUrl);
	const sim = group.refs[0] as (typeof group.refs)[0];
	try {
		await until(() => allOnline(server.url), 10_000, "machine online");
		const { thread_id } = await call<{ thread_id: string }>(
			client,
			"t3_dispatch",
			{
				machine: sim.name,
				project: "demo",
				prompt: "say hello",
			},
		);
		await call(client, "t3_wait", { thread_id, timeout: 30 });
		const headers = {
			authorization: `Bearer ${sim.token}`,
			"x-t3-orchestration-protocol": "2",
		};
		const steps = {
			thread: () => call(client, "t3_thread", { thread_id }),
			noop: () => call(client, "t3_machines"),
			direct: async () => {
				const response = await fetch(
					`${sim.url}/api/orchestration/threads/${thread_id}`,
					{ headers },
				);
				if (response.status !== 200)
					throw new Error(`direct GET ${response.status}`);
				await response.json();
			},
		};
		const samples = {
			thread: [] as number[],
			noop: [] as number[],
			direct: [] as number[],
		};
		for (let i = 0; i < 30; i++)
			for (const step of Object.values(steps)) await step(); // warm-up
		for (let i = 0; i < config.overheadSamples; i++) {
			samples.thread.push(await timed(steps.thread));
			samples.noop.push(await timed(steps.noop));
			samples.direct.push(await timed(steps.direct));
		}
		const t = summarize(samples.thread);
		const n = summarize(samples.noop);
		const d = summarize(samples.direct);
		const r50 = t.p50 / (n.p50 + d.p50);
		const r99 = t.p99 / (n.p99 + d.p99);
		return {
			rows: [
				{
					figure: "3. tool overhead (t3_thread)",
					value: fmtSummary(t),
					baseline: `t3_machines p50 ${n.p50.toFixed(2)} + direct GET p50 ${d.p50.toFixed(2)} ms (p99 ${n.p99.toFixed(2)} + ${d.p99.toFixed(2)})`,
					ratio: `p50 ${r50.toFixed(2)}×, p99 ${r99.toFixed(2)}×`,
					target: "≤ 1.2×",
					pass: r50 <= 1.2,
				},
			],
			raw: { thread: t, noop: n, direct: d, ratioP50: r50, ratioP99: r99 },
		};
	} finally {
		await client.close().catch(() => {});
		await server.stop();
		await group.stop();
	}
}
