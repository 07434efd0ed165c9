/** Threads a simulator runs now (a run preparing, starting, running, waiting or queued). */
import type { Sim } from "../../src/sim/index.ts";
import { BUSY_RUN_STATUSES } from "../../src/t3/model.ts";
import { type Stack, until } from "./stack.ts";

export const busyOn = (sim: Sim): string[] =>
	sim.threadIds().filter((id) => {
		const p = sim.projection(id) as { runs?: { status: string }[] } | undefined;
		return (p?.runs ?? []).some((r) => BUSY_RUN_STATUSES.has(r.status));
	});

/** Until none of the stack's named simulators runs a thread. */
export function untilSimsIdle(stack: Stack, names: string[]): Promise<void> {
	return until(
		() => names.every((name) => busyOn(stack.sim(name)).length === 0),
		10_000,
		`${names.join(" and ")} idle`,
	);
}
