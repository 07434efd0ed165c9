/** A thread's `state` and `pending` as `t3_threads` reports them (CONTRACT.md `t3_threads`). */
import { BUSY_RUN_STATUSES, type ThreadShell } from "../t3/model.ts";

export type ThreadState = "attention" | "active" | "settled";

/** `pendingRuntimeRequest.kind` → the contract's `pending` (PROTOCOL.md §7.4). */
export function pendingOf(thread: ThreadShell): "question" | "approval" | null {
	const kind = thread.pendingRuntimeRequest?.kind;
	if (!kind || kind === "auth_refresh") return null;
	return kind === "user_input" ? "question" : "approval";
}

/** Exactly one state per thread, in CONTRACT.md's order of precedence. */
export function threadState(thread: ThreadShell): ThreadState {
	if (pendingOf(thread) !== null || thread.status === "failed")
		return "attention";
	if (thread.activeRunId !== null || BUSY_RUN_STATUSES.has(thread.status))
		return "active";
	return "settled";
}
