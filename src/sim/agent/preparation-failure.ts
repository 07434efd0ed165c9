/**
 * Prompt "fail preparing": the run's workspace preparation fails before any provider turn, as a
 * 0.1.x server reports it: the preparation item failed, a `system_notice`, and the `error` item
 * with code `workspace_preparation_failed` (idx 70102248590). A continuation with that prompt
 * fails the same way, as if its thread needed preparing again. A worktree T3 cannot create
 * (worktrees.ts) fails the same way with git's reason.
 */

import { simHas } from "../compat.ts";
import { nowIso, providerItemIdFor } from "../engine/rows.ts";
import type { ThreadState } from "../engine/store.ts";
import {
	addItem,
	type RunHandle,
	type RunKit,
	updateItem,
} from "../runs/run-rows.ts";
import type { FailureDetail } from "./script.ts";

export const PREPARATION_FAILURE_PROMPT = "fail preparing";
export const WORKSPACE_PREPARATION_FAILURE_CODE =
	"workspace_preparation_failed";
const MESSAGE =
	"Workspace preparation failed: the setup script exited with code 1.";

const failed = new WeakMap<ThreadState, Map<string, RunHandle>>();

/** The run whose preparation failed, once, for `prepared-run.retry` (preparation-retry.ts). */
export function takeFailedPreparation(
	thread: ThreadState,
	runId: string,
): RunHandle | undefined {
	const h = failed.get(thread)?.get(runId);
	failed.get(thread)?.delete(runId);
	return h?.run.status === "failed" ? h : undefined;
}

export function failsPreparation(prompt: string): boolean {
	return prompt.toLowerCase().includes(PREPARATION_FAILURE_PROMPT);
}

export function failPreparation(
	kit: RunKit,
	h: RunHandle,
	failRun: (
		kit: RunKit,
		h: RunHandle,
		message: string,
		detail: FailureDetail,
	) => void,
	reason?: string,
): void {
	const message = reason ? `Workspace preparation failed: ${reason}` : MESSAGE;
	const prep =
		h.thread.rows.turnItems.find(
			(i) => i.type === "command_execution" && i.runId === h.run.id,
		) ??
		addItem(kit, h, {
			id: providerItemIdFor(
				h.instanceId,
				`workspace-preparation${encodeURIComponent(`:${h.run.id}`)}`,
			),
			type: "command_execution",
			title: "Preparing workspace",
			input: "Preparing workspace",
		});
	updateItem(kit, h, prep, {
		status: "failed",
		title: "Setup script failed",
		exitCode: 1,
		completedAt: nowIso(),
	});
	if (simHas(kit.compat, "systemNotice"))
		addItem(kit, h, {
			id: `turn-item:run:${encodeURIComponent(h.run.id)}:notice:workspace-preparation`,
			type: "system_notice",
			title: "Workspace preparation",
			message,
		});
	h.preparing = false;
	const runs = failed.get(h.thread) ?? new Map<string, RunHandle>();
	runs.set(h.run.id, h);
	failed.set(h.thread, runs);
	failRun(kit, h, message, {
		class: "unknown",
		code: WORKSPACE_PREPARATION_FAILURE_CODE,
	});
}
