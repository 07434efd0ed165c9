/**
 * A `t3_threads` row's failure, agreeing with `t3_wait`, `t3_thread` and events. The shell's
 * `lastErrorClass` is enough for most failures, but some it cannot tell apart: a failed workspace
 * preparation is only its `error` item's code, and a pre-release shell has no class at all. For
 * a failed row whose shell says no more than `unknown`, the run's projection is read once and
 * its answer kept by run id and the shell's `updatedAt` (a run prepared again and failed again is
 * read again), so listing again costs nothing.
 */

import {
	type RunFailure,
	runFailure,
	shellFailure,
} from "../../t3/derive/run-failure.ts";
import type { Machine } from "../../t3/machine-api.ts";
import type { ThreadShell } from "../../t3/model.ts";
import { perMachineMemo } from "./per-machine-memo.ts";

/** Runs whose class was read. */
const known = perMachineMemo<RunFailure>();

/** The failures of a page's rows, in their order; a read that fails keeps the shell's answer. */
export async function listedFailures(
	rows: { machine: Machine; thread: ThreadShell }[],
): Promise<RunFailure[]> {
	return Promise.all(
		rows.map(async ({ machine, thread }) => {
			const fromShell = shellFailure(thread);
			const runId = thread.latestRunId;
			if (fromShell.error_class !== "unknown" || !runId) return fromShell;
			const key = `${runId}\u0000${thread.updatedAt ?? ""}`;
			const kept = known.get(machine, key);
			if (kept) return kept;
			try {
				const { projection } = await machine.getThread(thread.id);
				const run = projection.runs.find((r) => r.id === runId);
				if (run?.status !== "failed") return fromShell;
				const failure = runFailure(projection, runId, thread);
				known.set(machine, key, failure);
				return failure;
			} catch {
				return fromShell;
			}
		}),
	);
}
