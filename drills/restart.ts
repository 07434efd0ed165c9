/**
 * Drill: the T3 server restarts while runs are in flight. A restart cancels every unfinished
 * run (OBSERVED.md §5.6), so each must arrive as `thread.interrupted`; runs dispatched around
 * the restart still complete and arrive as `thread.completed`.
 */
import { dispatchUntilAccepted } from "./lib/harness.ts";
import { dispatchHeld, untilRunning } from "./lib/held-runs.ts";
import { type DrillSize, stackDrill, untilOnline } from "./lib/stack-drill.ts";
import type { DrillReport } from "./lib/tally.ts";

export function restartDrill({ full }: DrillSize): Promise<DrillReport> {
	const rounds = full ? 8 : 2;
	const longPerRound = full ? 5 : 2;
	const quickPerRound = full ? 4 : 2;
	return stackDrill("t3-restart", {}, async (stack, sim) => {
		for (let round = 0; round < rounds; round++) {
			const long = await dispatchHeld(stack, longPerRound, round);
			const quick = Array.from({ length: quickPerRound }, (_, i) =>
				dispatchUntilAccepted(stack.client, "demo", `say hello ${round}.${i}`),
			);
			await untilRunning(stack, long, "long runs to be running");
			await sim.restart();
			await Promise.all(quick);
			await untilOnline(stack, "online after restart");
			// Runs started right after the restart complete normally.
			await dispatchUntilAccepted(
				stack.client,
				"demo",
				`after restart ${round}`,
			);
		}
		return {
			notes: [
				`${rounds} restarts, ${longPerRound} held runs cancelled by each`,
			],
		};
	});
}
