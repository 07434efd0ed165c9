/**
 * `prepared-run.retry {threadId, runId}` (RELEASED-0.1.md §3): a run whose workspace
 * preparation failed gets a new attempt that prepares again (worktrees.ts reads the same
 * request, so a base ref created since then now resolves) and then runs its prompt.
 */
import { pickScript } from "./agent.ts";
import { takeFailedPreparation } from "./preparation-failure.ts";
import { attemptIdFor } from "./rows.ts";
import { driveRun } from "./run-lifecycle.ts";
import {
	put,
	type RunHandle,
	type RunKit,
	setNode,
	setRun,
} from "./run-rows.ts";
import type { ThreadState } from "./store.ts";

export function retryPreparation(
	kit: RunKit,
	thread: ThreadState,
	runId: string,
	adopt: (h: RunHandle) => void,
): number | string {
	const h = takeFailedPreparation(thread, runId);
	if (!h) return `Run ${runId} has no failed workspace preparation to retry.`;
	const ordinal = Number(h.attempt.attemptOrdinal ?? 1) + 1;
	h.attempt = {
		...h.attempt,
		id: attemptIdFor(h.run.id, ordinal),
		attemptOrdinal: ordinal,
		providerTurnId: null,
		reason: "preparation_retry",
		status: "pending",
		startedAt: null,
		completedAt: null,
	};
	put(kit, h, "attempts", h.attempt, "run-attempt.created");
	Object.assign(h, {
		controller: new AbortController(),
		providerTurn: null,
		pending: null,
		release: null,
		finishRequested: false,
		preparing: true,
		steers: [],
	});
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
