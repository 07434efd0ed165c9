/**
 * `t3_manage` `cancel_queued` / `edit_queued`: `queued-run.cancel` and `queued-run.edit`
 * (PROTOCOL.md §6.5) for a follow-up that has not started. A run that started or ended is
 * refused before anything is sent, saying what works instead; the pre-release engine lacks
 * the edit (a Die), which is said plainly.
 */
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadDeps } from "../deps.ts";
import { checkPrompt } from "../dispatch/prompt.ts";
import { ThreadError } from "../errors.ts";
import type { LocatedThread } from "../locate.ts";
import { isUnsupported, unsupportedError } from "../unsupported.ts";
import { readHeldToMode } from "./held-read.ts";

export type QueueAction = "cancel_queued" | "edit_queued";

/** The queued run's new message, by the same rules as t3_dispatch's prompt. */
export function queuedPrompt(prompt: string | undefined): string {
	if (prompt === undefined)
		throw new ThreadError(
			'prompt: required for action "edit_queued" (the queued run\'s new message).',
		);
	checkPrompt(prompt);
	return prompt;
}

/** Run statuses after which a run will not start again. */
export const DONE = new Set([
	"completed",
	"interrupted",
	"failed",
	"cancelled",
	"rolled_back",
]);

function notQueued(threadId: string, runId: string, status: string): string {
	if (status === "cancelled")
		return `run_id: run "${runId}" of thread "${threadId}" was already cancelled; nothing is left to change.`;
	if (DONE.has(status))
		return `run_id: run "${runId}" of thread "${threadId}" already ran (its status is ${status}); only a queued run can be cancelled or edited. Send a new message with t3_dispatch instead.`;
	return `run_id: run "${runId}" of thread "${threadId}" has already started (its status is ${status}); only a queued run can be cancelled or edited. Stop it with t3_interrupt, or add to it with t3_dispatch mode "steer".`;
}

/** Sends the command; returns the sequence T3 wrote it at. */
export async function changeQueuedRun(
	deps: ThreadDeps,
	located: LocatedThread,
	action: QueueAction,
	runId: string | undefined,
	prompt: string | undefined,
	reason: (error: T3Error) => string,
): Promise<number> {
	const { threadId, entry } = located;
	if (runId === undefined)
		throw new ThreadError(
			`run_id: required for action "${action}" (the queued run, from t3_thread queued[].run_id).`,
		);
	const text = action === "edit_queued" ? queuedPrompt(prompt) : undefined;
	// A fresh read: a run that started a moment ago must not be edited behind the agent's back.
	const projection = await readHeldToMode(deps, located, action);
	const run = projection.runs.find((r) => r.id === runId);
	if (!run)
		throw new ThreadError(
			`run_id: thread "${threadId}" has no run "${runId}". Take it from t3_thread queued[].run_id.`,
		);
	if (run.status !== "queued")
		throw new ThreadError(notQueued(threadId, runId, run.status));
	const base = { commandId: deps.newId(), threadId, runId };
	const command =
		action === "cancel_queued"
			? { ...base, type: "queued-run.cancel" }
			: { ...base, type: "queued-run.edit", text: text as string };
	try {
		const { sequence } = await entry.machine.dispatch(command);
		return sequence;
	} catch (error) {
		if (action === "edit_queued" && isUnsupported(error))
			throw unsupportedError(
				entry.config.name,
				"editing a queued run",
				"queued-run.edit",
				'cancel it with t3_manage action "cancel_queued" and send the new text with t3_dispatch instead.',
			);
		// It started between our read and T3's check: T3 refuses; say what works now.
		if (error instanceof T3Error && error.code === "REJECTED")
			throw new ThreadError(
				`T3 machine "${entry.config.name}" refused ${action} on thread "${threadId}": ${reason(error)} If the run has started, stop it with t3_interrupt or add to it with t3_dispatch mode "steer".`,
			);
		throw error;
	}
}
