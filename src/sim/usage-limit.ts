/**
 * Prompt "hit the usage limit": the provider refuses the turn on a usage limit (released failure
 * class `usage_limit` with its `resetAt`) and T3 arms limit recovery with auto-resume, so the
 * shell carries `lastErrorClass`, `usageLimitResetAt` and `limitRecovery` as a 0.1.x server's does.
 * The sim never actually resumes: the reset is an hour away.
 */
import { AgentFailure, type AgentScript } from "./agent.ts";
import { nowIso } from "./rows.ts";
import type { RunHandle, RunKit } from "./run-rows.ts";

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

/** T3's limit recovery for the failed run (`thread.metadata.update {limitRecovery}`). */
export function armLimitRecovery(
	kit: RunKit,
	h: RunHandle,
	resetAt: string,
): void {
	const { thread } = h;
	thread.app = {
		...thread.app,
		limitRecovery: { runId: h.run.id, resetAt, autoResume: true },
		updatedAt: nowIso(),
	};
	kit.store.appendThreadEvent(thread, "thread.metadata-updated", {
		providerInstanceId: h.instanceId,
	});
}
