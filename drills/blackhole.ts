/**
 * Drill: the T3 server's sockets go silent (no Pong, Chunk or Exit) without closing. The
 * client's heartbeat must notice, drop the socket and reconnect; runs that finished while the
 * socket was dead still produce their events after the catch-up.
 */
import {
	dispatchUntilAccepted,
	FAST_MACHINE,
	machineState,
	startDrillStack,
	until,
} from "./lib/harness.ts";
import { latestRunStatus, settleAndTally } from "./lib/settle.ts";
import type { DrillReport } from "./lib/tally.ts";

export async function blackholeDrill({
	full,
}: {
	full: boolean;
}): Promise<DrillReport> {
	const startedAt = performance.now();
	const rounds = full ? 6 : 1;
	const perRound = full ? 8 : 3;
	const stack = await startDrillStack();
	const detections: number[] = [];
	try {
		const sim = stack.sim();
		await until(
			() => machineState(stack, "demo") === "online",
			10_000,
			"online",
		);
		for (let round = 0; round < rounds; round++) {
			const held = await Promise.all(
				Array.from({ length: perRound }, (_, i) =>
					dispatchUntilAccepted(
						stack.client,
						"demo",
						`long task ${round}.${i}`,
					),
				),
			);
			const ids = held.filter((id): id is string => id !== null);
			await until(
				() => ids.every((id) => latestRunStatus(sim, id) === "running"),
				10_000,
				"held runs running",
			);
			const silentAt = performance.now();
			sim.blackhole(true);
			// Half the runs finish while the socket is silent: the client cannot see them.
			for (const id of ids.slice(0, Math.ceil(ids.length / 2)))
				sim.finishRun(id);
			await until(
				() => machineState(stack, "demo") !== "online",
				FAST_MACHINE.pongTimeoutMs * 10,
				"heartbeat to detect the silent socket",
				5,
			);
			detections.push(performance.now() - silentAt);
			await Bun.sleep(200);
			sim.blackhole(false);
			await until(
				() => machineState(stack, "demo") === "online",
				10_000,
				"online after the blackhole",
			);
			for (const id of ids.slice(Math.ceil(ids.length / 2))) sim.finishRun(id);
		}
		const worst = Math.max(...detections);
		return await settleAndTally(
			"blackhole",
			stack.sims.values(),
			stack.receiver,
			startedAt,
			{
				explain: stack.explain,
				notes: [
					`${rounds} blackholes; detected after ${detections.map((d) => Math.round(d)).join(", ")} ms (ping ${FAST_MACHINE.pingIntervalMs} ms, pong timeout ${FAST_MACHINE.pongTimeoutMs} ms; worst ${Math.round(worst)} ms)`,
				],
			},
		);
	} finally {
		await stack.stop();
	}
}
