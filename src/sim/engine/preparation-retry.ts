/**
 * `prepared-run.retry {threadId, runId}` (RELEASED-0.1.md §3): a run whose workspace
 * preparation failed gets a new attempt that prepares again (worktrees.ts reads the same
 * request, so a base ref created since then now resolves) and then runs its prompt.
 */
import { pickScript } from "../agent/agent.ts";
import { takeFailedPreparation } from "../agent/preparation-failure.ts";
import { driveRun } from "../runs/run-lifecycle.ts";
import {
	type RunHandle,
	type RunKit,
	setNode,
	setRun,
	startNewAttempt,
} from "../runs/run-rows.ts";
import type { ThreadState } from "./store.ts";

export function retryPreparation(
	kit: RunKit,
	thread: ThreadState,
	runId: string,
	adopt: (h: RunHandle) => void,
): number | string {
	const h = takeFailedPreparation(thread, runId);
	if (!h) return `Run ${runId} has no failed workspace preparation to retry.`;
	startNewAttempt(kit, h, "preparation_retry", { preparing: true });
	thread.lastError = null;
	thread.lastErrorClass = null;
	setNode(kit, h, { status: "pending", completedAt: null });
	setRun(kit, h, {
		status: "preparing",
		completedAt: null,
		activeAttemptId: h.attempt.id,
	});
	adopt(h);
	void driveRun(kit, h, pickScript(h.prompt));
	return kit.store.head();
}
