/**
 * /healthz with every machine down: 50 machines on closed loopback ports, so the connector is
 * busy reconnecting with backoff while the probe is answered. Baseline: a bare Bun.serve JSON
 * answer on loopback (the floor of one HTTP round trip from this client).
 */

import { freePort } from "../test/helpers/process.ts";
import { config } from "./lib/config.ts";
import { startBinary } from "./lib/server.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";

async function sample(url: string, n: number): Promise<number[]> {
	const out: number[] = [];
	for (let i = 0; i < n; i++) {
		const t0 = performance.now();
		const response = await fetch(url);
		await response.json();
		out.push(performance.now() - t0);
	}
	return out;
}

export async function benchHealthz(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const machines = [];
	for (let i = 0; i < config.scaleMachines; i++)
		machines.push({
			name: `down${i + 1}`,
			url: `http://127.0.0.1:${await freePort()}`,
			token: "t",
		});
	const server = await startBinary({ machines });
	const floor = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch: () => Response.json({ status: "ok" }),
	});
	try {
		await Bun.sleep(500); // every machine has failed its first connect by now
		await sample(`${server.url}/healthz`, 20);
		await sample(`http://127.0.0.1:${floor.port}/`, 20);
		const h = summarize(
			await sample(`${server.url}/healthz`, config.healthzSamples),
		);
		const f = summarize(
			await sample(`http://127.0.0.1:${floor.port}/`, config.healthzSamples),
		);
		const states = (await (await fetch(`${server.url}/healthz`)).json()) as {
			machines: Record<string, { state: string }>;
		};
		const down = Object.values(states.machines).filter(
			(m) => m.state !== "online",
		).length;
		return {
			rows: [
				{
					figure: `/healthz, ${down}/${machines.length} machines down`,
					value: fmtSummary(h),
					baseline: `bare Bun.serve JSON: ${fmtSummary(f)}`,
					ratio: `p50 ${ratio(h.p50, f.p50)}, p99 ${ratio(h.p99, f.p99)}`,
					target: "< 50 ms",
					pass: h.p99 < 50,
				},
			],
			raw: { healthz: h, floor: f, down },
		};
	} finally {
		floor.stop(true);
		await server.stop();
	}
}
