/** A thread's `state` and `pending` as `t3_threads` reports them (CONTRACT.md `t3_threads`). */

import { questionKind } from "../../t3/derive/request-kinds.ts";
import { shellBackgroundTasks } from "../../t3/derive/stop-target.ts";
import { BUSY_RUN_STATUSES, type ThreadShell } from "../../t3/model.ts";

export type ThreadState = "attention" | "active" | "settled";
export type Pending = "question" | "approval" | "auth_refresh" | "dynamic_tool";

/** `pendingRuntimeRequest.kind` → the contract's `pending` (PROTOCOL.md §7.4). */
export function pendingOf(thread: ThreadShell): Pending | null {
	const kind = thread.pendingRuntimeRequest?.kind;
	if (!kind) return null;
	const question = questionKind(kind);
	return question === "user_input" ? "question" : question;
}

/**
 * Exactly one state per thread, in CONTRACT.md's order of precedence. A dynamic tool call is
 * answered by a T3 client, so it does not ask for anyone's attention; one T3 marks not resumable
 * does, but only the projection says so: `t3_threads` counts it (pending-resumability.ts).
 */
export function threadState(thread: ThreadShell): ThreadState {
	const pending = pendingOf(thread);
	if (
		(pending !== null && pending !== "dynamic_tool") ||
		thread.status === "failed"
	)
		return "attention";
	if (thread.activeRunId !== null || BUSY_RUN_STATUSES.has(thread.status))
		return "active";
	return "settled";
}

/** Pending background work T3 reports for the thread (the held shell keeps only its count). */
export function backgroundTasks(thread: ThreadShell): number {
	return shellBackgroundTasks(thread);
}

/** Until when the thread is snoozed (ISO time), or null. */
export function snoozedUntil(thread: ThreadShell): string | null {
	const until = thread.snoozedUntil;
	return typeof until === "string" && until.length > 0 ? until : null;
}
