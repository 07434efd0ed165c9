/**
 * Held runs: "long task" dispatches that the simulator keeps `running` until the drill calls
 * `sim.finishRun` (or a T3 restart cancels them), so a fault can strike while runs are in flight.
 */
import { type DrillStack, dispatchUntilAccepted, until } from "./harness.ts";
import { latestRunStatus } from "./settle.ts";

/**
 * Dispatches `count` held runs on the stack's first machine, prompts `long task <label>.<i>`
 * (`long task <i>` without a label). One thread id per dispatch, null where it never went through.
 */
export function dispatchHeld(
	stack: DrillStack,
	count: number,
	label?: string | number,
): Promise<(string | null)[]> {
	return Promise.all(
		Array.from({ length: count }, (_, i) =>
			dispatchUntilAccepted(
				stack.client,
				"demo",
				label === undefined ? `long task ${i}` : `long task ${label}.${i}`,
			),
		),
	);
}

/** Waits until every thread's latest run is `running` on the first sim (a null never is). */
export function untilRunning(
	stack: DrillStack,
	ids: readonly (string | null)[],
	what = "held runs running",
): Promise<void> {
	const sim = stack.sim();
	return until(
		() =>
			ids.every((id) => id !== null && latestRunStatus(sim, id) === "running"),
		10_000,
		what,
	);
}

/** Dispatches `count` held runs and waits until the accepted ones are running; their ids. */
export async function heldRuns(
	stack: DrillStack,
	count: number,
	label?: string | number,
): Promise<string[]> {
	const ids = (await dispatchHeld(stack, count, label)).filter(
		(id): id is string => id !== null,
	);
	await untilRunning(stack, ids);
	return ids;
}

/**
 * `rounds` times: dispatches `perRound` held runs labelled by the round, waits until they run,
 * then hands their ids to `fault` (which strikes and lets them finish).
 */
export async function heldRounds(
	stack: DrillStack,
	rounds: number,
	perRound: number,
	fault: (ids: string[], round: number) => Promise<void>,
): Promise<void> {
	for (let round = 0; round < rounds; round++)
		await fault(await heldRuns(stack, perRound, round), round);
}
