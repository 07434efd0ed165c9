/**
 * Drill: the connector is killed with SIGKILL at random points while runs start, finish and
 * get delivered, and restarted on the same state file. Whatever was committed survives: every
 * run's event arrives, and a redelivery after a kill carries the same `webhook-id`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSim } from "../src/sim/index.ts";
import {
	type ServerProcess,
	startServerProcess,
} from "../test/helpers/process.ts";
import { startReceiver, TEST_SECRET } from "../test/helpers/receiver.ts";
import { connectClient, dispatchUntilAccepted, seeded } from "./lib/harness.ts";
import { settleAndTally } from "./lib/settle.ts";
import type { DrillSize } from "./lib/stack-drill.ts";
import type { DrillReport } from "./lib/tally.ts";

export async function kill9Drill({ full }: DrillSize): Promise<DrillReport> {
	const startedAt = performance.now();
	const totalRuns = full ? 100 : 10;
	const batch = full ? 5 : 3;
	const seed = Number(process.env.DRILL_SEED ?? 9);
	const random = seeded(seed);
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-kill9-"));
	const sim = await startSim({ stepMs: 15, coalesceMs: 5 });
	const receiver = startReceiver();
	const options = {
		dir,
		statePath: join(dir, "state.sqlite"),
		machines: [{ name: "demo", url: sim.url, token: sim.token }],
		env: {
			T3CODE_MCP_HOOK_URL: receiver.url,
			T3CODE_MCP_HOOK_SECRET: TEST_SECRET,
			T3CODE_MCP_LOG_LEVEL: "error",
		},
	};
	let proc: ServerProcess | undefined;
	let kills = 0;
	let attempted = 0;
	try {
		while (attempted < totalRuns) {
			proc = await startServerProcess(options);
			const client = await connectClient(proc.mcpUrl);
			const n = Math.min(batch, totalRuns - attempted);
			attempted += n;
			// Fire the batch and kill at a random moment: before, during or after launch,
			// completion, event commit or delivery.
			const inFlight = Array.from({ length: n }, (_, i) =>
				dispatchUntilAccepted(
					client,
					"demo",
					`say hello ${attempted}.${i}`,
					3_000,
				).catch(() => null),
			);
			await Bun.sleep(Math.floor(random() * 400));
			await proc.kill("SIGKILL");
			kills += 1;
			await Promise.allSettled(inFlight);
			await client.close().catch(() => {});
		}
		proc = await startServerProcess(options);
		const report = await settleAndTally("kill-9", [sim], receiver, startedAt, {
			timeoutMs: 30_000,
			notes: [
				`${kills} SIGKILLs over ${attempted} dispatch attempts (seed ${seed}; DRILL_SEED=… to replay)`,
			],
		});
		return report;
	} finally {
		await proc?.kill("SIGTERM").catch(() => 0);
		await sim.stop();
		await receiver.stop();
		rmSync(dir, { recursive: true, force: true });
	}
}
