/**
 * The frame of a drill on the in-process stack: start the stack, wait until its machines are
 * online, run the drill's own part, then settle and tally every sim's runs. The stack is
 * stopped either way.
 */
import type { Sim } from "../../src/sim/index.ts";
import {
	type DrillStack,
	type DrillStackOptions,
	machineState,
	startDrillStack,
	until,
} from "./harness.ts";
import { settleAndTally } from "./settle.ts";
import type { DrillReport } from "./tally.ts";

/** A drill runs full size (`bun run drills`) or short (CI, `--short`). */
export interface DrillSize {
	full: boolean;
}

/** What a drill's own part hands to the tally. */
export interface DrillOutcome {
	notes: string[];
	/** How long to wait for the last events (default: settleAndTally's). */
	timeoutMs?: number;
}

/** Waits until every machine of the stack reads `online`. */
export function untilOnline(
	stack: DrillStack,
	what = "online",
	timeoutMs = 10_000,
): Promise<void> {
	const names = [...stack.sims.keys()];
	return until(
		() => names.every((name) => machineState(stack, name) === "online"),
		timeoutMs,
		what,
	);
}

/** Settles and tallies the runs of every sim of the stack. */
export function settleStack(
	drill: string,
	stack: DrillStack,
	startedAt: number,
	outcome: DrillOutcome,
): Promise<DrillReport> {
	return settleAndTally(drill, stack.sims.values(), stack.receiver, startedAt, {
		explain: stack.explain,
		timeoutMs: outcome.timeoutMs,
		notes: outcome.notes,
	});
}

export async function stackDrill(
	drill: string,
	options: DrillStackOptions,
	/** The drill's own part; `sim` is the stack's first simulator. */
	body: (stack: DrillStack, sim: Sim) => Promise<DrillOutcome>,
): Promise<DrillReport> {
	const startedAt = performance.now();
	const stack = await startDrillStack(options);
	try {
		await untilOnline(stack);
		const outcome = await body(stack, stack.sim());
		return await settleStack(drill, stack, startedAt, outcome);
	} finally {
		await stack.stop();
	}
}
