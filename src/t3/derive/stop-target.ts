/**
 * What T3's Stop stops (client-runtime `interruptThreadTurn`, idx 70174805780): the run in flight,
 * else, when only background work is left, the latest run, whose work it ends. "In flight" is
 * T3's `isInterruptibleRunForShell` (idx 70189692800): preparing, starting or running, never
 * `waiting`, whose turn is over (OBSERVED.md §5.6). Background work is what T3's shell lists as
 * `pendingBackgroundTasks`, derived from the provider threads' rosters once the latest run
 * settled (`derivePendingBackgroundWork`, idx 70607754371). Pure functions over the read models.
 */
import { isRecord } from "../decode/json.ts";
import type { Run, ThreadProjection, ThreadShell } from "../model.ts";
import { latestRun } from "./run-outcome.ts";

export const INTERRUPTIBLE_RUN_STATUSES: ReadonlySet<string> = new Set([
	"preparing",
	"starting",
	"running",
]);

/** Statuses after which a run's own work is over and background work may be left. */
const SETTLED_RUN_STATUSES: ReadonlySet<string> = new Set([
	"completed",
	"failed",
	"interrupted",
	"cancelled",
]);

/**
 * The run to interrupt: the shell's `activeRunId` while the projection shows it in flight, else
 * the newest run in flight (a shell derived elsewhere may name a `waiting` run); null when none.
 */
export function interruptibleRun(
	projection: ThreadProjection,
	shell: Pick<ThreadShell, "activeRunId">,
): Run | null {
	const named = shell.activeRunId
		? projection.runs.find((r) => r.id === shell.activeRunId)
		: undefined;
	if (named && INTERRUPTIBLE_RUN_STATUSES.has(named.status)) return named;
	let newest: Run | null = null;
	for (const run of projection.runs)
		if (
			INTERRUPTIBLE_RUN_STATUSES.has(run.status) &&
			(!newest || run.ordinal > newest.ordinal)
		)
			newest = run;
	return newest;
}

/** How many background tasks a shell lists (the held shell keeps only the count). */
export function shellBackgroundTasks(shell: ThreadShell): number {
	if (typeof shell.backgroundTaskCount === "number")
		return shell.backgroundTaskCount;
	const tasks = shell.pendingBackgroundTasks;
	return Array.isArray(tasks) ? tasks.length : 0;
}

/**
 * The task ids the projection's provider threads still list as background work (the active
 * provider thread's when the thread names one), once the latest run settled and none is in
 * flight. T3 also counts live background turn items; their count comes with the shell.
 */
export function projectionBackgroundTasks(
	projection: ThreadProjection,
): string[] {
	if (projection.runs.some((r) => INTERRUPTIBLE_RUN_STATUSES.has(r.status)))
		return [];
	const latest = latestRun(projection);
	if (!latest || !SETTLED_RUN_STATUSES.has(latest.status)) return [];
	const active = projection.thread.activeProviderThreadId;
	const providerThreads = Array.isArray(projection.providerThreads)
		? projection.providerThreads
		: [];
	const ids = new Set<string>();
	for (const providerThread of providerThreads) {
		if (!isRecord(providerThread)) continue;
		if (typeof active === "string" && providerThread.id !== active) continue;
		const roster = providerThread.pendingBackgroundTasks;
		for (const task of Array.isArray(roster) ? roster : [])
			if (isRecord(task) && typeof task.taskId === "string" && task.taskId)
				ids.add(task.taskId);
	}
	return [...ids];
}

/**
 * What a Stop would target now: the run in flight; else the latest run when it settled and
 * background work is left (as the shell or the projection lists it); else nothing.
 */
export function stopTarget(
	projection: ThreadProjection,
	shell: ThreadShell,
):
	| { kind: "run"; run: Run }
	| { kind: "background"; run: Run; tasks: number }
	| null {
	const run = interruptibleRun(projection, shell);
	if (run) return { kind: "run", run };
	const latest = latestRun(projection);
	if (!latest || !SETTLED_RUN_STATUSES.has(latest.status)) return null;
	const tasks = Math.max(
		shellBackgroundTasks(shell),
		projectionBackgroundTasks(projection).length,
	);
	return tasks > 0 ? { kind: "background", run: latest, tasks } : null;
}
