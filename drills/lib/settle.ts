/**
 * The end of every drill: wait until the receiver holds an event for every terminal run the
 * simulators show (or a deadline passes), let in-flight deliveries finish, then count.
 */
import type { Sim } from "../../src/sim/index.ts";
import type { Receiver } from "../../test/helpers/receiver.ts";
import { eventually } from "./harness.ts";
import {
	type DrillReport,
	type Expectation,
	expectations,
	missing,
	tally,
} from "./tally.ts";

/** Status of a thread's latest run on the sim (undefined before its first run exists). */
export function latestRunStatus(
	sim: Sim,
	threadId: string,
): string | undefined {
	const projection = sim.projection(threadId) as
		| { runs?: { status: string; ordinal: number }[] }
		| undefined;
	const runs = [...(projection?.runs ?? [])].sort(
		(a, b) => a.ordinal - b.ordinal,
	);
	return runs.at(-1)?.status;
}

export async function settleAndTally(
	drill: string,
	sims: Iterable<Sim>,
	receiver: Receiver,
	startedAt: number,
	options: {
		threadIds?: Set<string>;
		timeoutMs?: number;
		notes?: string[];
		/** Describes a thread whose event is missing (e.g. the connector's record of it). */
		explain?: (threadId: string) => string;
	} = {},
): Promise<DrillReport> {
	const simList = [...sims];
	let expectation: Expectation = expectations(simList, options.threadIds);
	// Settled = every run terminal and every terminal run's event in. Judging while a run is
	// still finishing would count its event as lost when it lands a moment later.
	await eventually(() => {
		expectation = expectations(simList, options.threadIds);
		return (
			expectation.busy === 0 &&
			missing(expectation, receiver.deliveries).length === 0
		);
	}, options.timeoutMs ?? 20_000);
	// Give a redelivery that is already on the wire a moment to land, so it is counted.
	await Bun.sleep(100);
	expectation = expectations(simList, options.threadIds);
	const notes = [...(options.notes ?? [])];
	for (const key of missing(expectation, receiver.deliveries).slice(0, 5)) {
		const [threadId = "", runId = ""] = key.split(":");
		const sim = simList.find((s) => s.threadIds().includes(threadId));
		const runs = (
			(sim?.projection(threadId) as { runs?: { id: string; status: string }[] })
				?.runs ?? []
		).map((r) => `${r.id === runId ? "*" : ""}${r.status}`);
		notes.push(
			`LOST ${key} (${expectation.expected.get(key)}); sim runs [${runs.join(", ")}]${options.explain ? `; ${options.explain(threadId)}` : ""}`,
		);
	}
	return tally(drill, expectation, receiver.deliveries, startedAt, notes);
}
