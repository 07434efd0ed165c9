/**
 * Drill: the T3 server's sockets go silent (no Pong, Chunk or Exit) without closing. The
 * client's heartbeat must notice, drop the socket and reconnect; runs that finished while the
 * socket was dead still produce their events after the catch-up.
 */
import { FAST_MACHINE, machineState, until } from "./lib/harness.ts";
import { heldRounds } from "./lib/held-runs.ts";
import { type DrillSize, stackDrill, untilOnline } from "./lib/stack-drill.ts";
import type { DrillReport } from "./lib/tally.ts";

export function blackholeDrill({ full }: DrillSize): Promise<DrillReport> {
	const rounds = full ? 6 : 1;
	const perRound = full ? 8 : 3;
	return stackDrill("blackhole", {}, async (stack, sim) => {
		const detections: number[] = [];
		await heldRounds(stack, rounds, perRound, async (ids) => {
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
			await untilOnline(stack, "online after the blackhole");
			for (const id of ids.slice(Math.ceil(ids.length / 2))) sim.finishRun(id);
		});
		const worst = Math.max(...detections);
		return {
			notes: [
				`${rounds} blackholes; detected after ${detections.map((d) => Math.round(d)).join(", ")} ms (ping ${FAST_MACHINE.pingIntervalMs} ms, pong timeout ${FAST_MACHINE.pongTimeoutMs} ms; worst ${Math.round(worst)} ms)`,
			],
		};
	});
}
