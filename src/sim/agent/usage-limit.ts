/**
 * Prompt "hit the usage limit": the provider refuses the turn on a usage limit (released failure
 * class `usage_limit` with its `resetAt`) and T3 arms limit recovery with auto-resume, so the
 * shell carries `lastErrorClass`, `usageLimitResetAt` and `limitRecovery` as a 0.1.x server's does.
 * At the reset (an hour away; `sim.finishRun` brings it forward) T3 resumes by itself as upstream's
 * limit-resume worker does: a `message.dispatch` of its own, `creationSource: "server"`.
 */

import { nowIso } from "../engine/rows.ts";
import type { ThreadState } from "../engine/store.ts";
import type { RunHandle, RunKit } from "../runs/run-rows.ts";
import { AgentFailure, type AgentScript } from "./script.ts";

export const USAGE_LIMIT_PROMPT = "hit the usage limit";
const RESET_AFTER_MS = 60 * 60 * 1000;

export const usageLimitScript: AgentScript = async (io) => {
	await io.step();
	const resetAt = new Date(Date.now() + RESET_AFTER_MS).toISOString();
	throw new AgentFailure(
		`You've hit your usage limit. Your limit resets at ${resetAt}.`,
		{ class: "usage_limit", code: "usage_limit", resetAt, autoResume: true },
	);
};

/** Per thread, T3's armed resume after a usage limit: runs it (once) when called. */
const resumes = new WeakMap<ThreadState, () => void>();

/** The reset has come (`sim.finishRun`): T3 resumes the thread now. */
export function resumeAfterLimitNow(thread: ThreadState): void {
	resumes.get(thread)?.();
}

/** T3's limit recovery for the failed run (`thread.metadata.update {limitRecovery}`), then its resume. */
export function armLimitRecovery(
	kit: RunKit,
	h: RunHandle,
	resetAt: string,
): void {
	const { thread } = h;
	const runId = h.run.id as string;
	const providerInstanceId = h.instanceId;
	thread.app = {
		...thread.app,
		limitRecovery: { runId, resetAt, autoResume: true },
		updatedAt: nowIso(),
	};
	kit.store.appendThreadEvent(thread, "thread.metadata-updated", {
		providerInstanceId,
	});
	let cancel = () => {};
	const resume = () => {
		cancel();
		if (resumes.get(thread) === resume) resumes.delete(thread);
		if (!kit.store.liveThread(thread.id)) return;
		thread.app = { ...thread.app, limitRecovery: null, updatedAt: nowIso() };
		kit.store.appendThreadEvent(thread, "thread.metadata-updated", {
			providerInstanceId,
		});
		const id = `limit-resume:${thread.id}:${runId}`;
		kit.selfDispatch({
			type: "message.dispatch",
			commandId: id,
			threadId: thread.id,
			messageId: id,
			usageLimitContinuationOfRunId: runId,
			text: "Continue where you left off.",
			attachments: [],
			dispatchMode: { type: "start_immediately" },
			createdBy: "user",
			creationSource: "server",
		});
	};
	resumes.set(thread, resume);
	cancel = kit.scheduler.later(RESET_AFTER_MS, resume);
}
