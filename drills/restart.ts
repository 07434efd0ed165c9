/**
 * Drill: the T3 server restarts while runs are in flight. A restart cancels every unfinished
 * run (OBSERVED.md §5.6), so each must arrive as `thread.interrupted`; runs dispatched around
 * the restart still complete and arrive as `thread.completed`.
 */
import {
	dispatchUntilAccepted,
	machineState,
	startDrillStack,
	until,
} from "./lib/harness.ts";
import { latestRunStatus, settleAndTally } from "./lib/settle.ts";
import type { DrillReport } from "./lib/tally.ts";

export interface DrillSize {
	full: boolean;
}

export async function restartDrill({ full }: DrillSize): Promise<DrillReport> {
	const startedAt = performance.now();
	const rounds = full ? 8 : 2;
	const longPerRound = full ? 5 : 2;
	const quickPerRound = full ? 4 : 2;
	const stack = await startDrillStack();
	try {
		const sim = stack.sim();
		await until(
			() => machineState(stack, "demo") === "online",
			10_000,
			"online",
		);
		for (let round = 0; round < rounds; round++) {
			const long = await Promise.all(
				Array.from({ length: longPerRound }, (_, i) =>
					dispatchUntilAccepted(
						stack.client,
						"demo",
						`long task ${round}.${i}`,
					),
				),
			);
			const quick = Array.from({ length: quickPerRound }, (_, i) =>
				dispatchUntilAccepted(stack.client, "demo", `say hello ${round}.${i}`),
			);
			await until(
				() => long.every((id) => id && latestRunStatus(sim, id) === "running"),
				10_000,
				"long runs to be running",
			);
			await sim.restart();
			await Promise.all(quick);
			await until(
				() => machineState(stack, "demo") === "online",
				10_000,
				"online after restart",
			);
			// Runs started right after the restart complete normally.
			await dispatchUntilAccepted(
				stack.client,
				"demo",
				`after restart ${round}`,
			);
		}
		return await settleAndTally(
			"t3-restart",
			stack.sims.values(),
			stack.receiver,
			startedAt,
			{
				explain: stack.explain,
				notes: [
					`${rounds} restarts, ${longPerRound} held runs cancelled by each`,
				],
			},
		);
	} finally {
		await stack.stop();
	}
}
