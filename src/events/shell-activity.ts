/**
 * What a watched thread's shell shows next to its persisted record: whether anything an
 * evaluation would record or report changed, the key of the activity last checked, and the
 * state an evaluation records as observed. Pure: the tracker decides from these without a read.
 */
import type { ThreadRecord } from "../store/threads.ts";
import { TERMINAL_RUN_STATUSES, type ThreadShell } from "../t3/model.ts";

/** The shell shows nothing an evaluation would record or report for this thread. */
export function nothingToDo(
	record: Pick<ThreadRecord, "last_run_id" | "last_status" | "last_request_id">,
	shell: ThreadShell,
): boolean {
	const requestId = shell.pendingRuntimeRequest?.id ?? null;
	const changed =
		shell.latestRunId !== record.last_run_id ||
		shell.status !== record.last_status ||
		requestId !== record.last_request_id;
	if (!changed) return true;
	const needsProjection =
		TERMINAL_RUN_STATUSES.has(shell.status) ||
		(requestId !== null && requestId !== record.last_request_id) ||
		// A request it showed is no longer pending: answered or dismissed (`thread.answered`).
		(record.last_request_id !== null && requestId !== record.last_request_id) ||
		(record.last_run_id !== null && shell.latestRunId !== record.last_run_id);
	// A busy run moving between busy statuses cannot produce an event: nothing to record.
	// (Persisting every status change cost a synchronous commit per shell update.)
	return !needsProjection;
}

/** What an evaluation decides on (run, status, request), as one comparable key. */
export function activityKey(shell: ThreadShell): string {
	return `${shell.latestRunId}\u0000${shell.status}\u0000${shell.pendingRuntimeRequest?.id ?? ""}`;
}

/** The shell's state as the thread store records it once evaluated. */
export function seen(shell: ThreadShell) {
	return {
		runId: shell.latestRunId,
		status: shell.status,
		requestId: shell.pendingRuntimeRequest?.id ?? null,
		title: shell.title,
	};
}
