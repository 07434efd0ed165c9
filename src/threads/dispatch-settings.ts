/**
 * The run settings `t3_dispatch` carries to T3 (CONTRACT.md "New optional t3_dispatch
 * arguments"): how a follow-up meets a run still going (`dispatchMode`, PROTOCOL.md §6.3),
 * and the thread's runtime / interaction mode, which are thread settings in V2 (§6.1, §6.8).
 */
import type { ThreadProjection, ThreadShell } from "../t3/model.ts";

export type DispatchMode = "queue" | "steer" | "restart";
export type RuntimeMode =
	| "full-access"
	| "approval-required"
	| "auto-accept-edits";
export type InteractionMode = "default" | "plan";

/** The run to steer or restart: the newest one that has not finished or queued. */
function activeRun(projection: ThreadProjection) {
	return projection.runs
		.filter((r) => ["preparing", "starting", "running"].includes(r.status))
		.sort((a, b) => b.ordinal - a.ordinal)[0];
}

/**
 * `queue` waits its turn (`start_immediately` queues behind a busy run). `steer` joins the
 * run only once it is `running` (T3 refuses earlier), else it queues; `restart` replaces the
 * active attempt. With nothing going, all three start a run.
 */
export function dispatchModeFor(
	mode: DispatchMode | undefined,
	projection: ThreadProjection,
): Record<string, unknown> {
	const active = activeRun(projection);
	if (mode === "steer" && active?.status === "running")
		return { type: "steer_active", targetRunId: active.id };
	if (mode === "restart" && active)
		return { type: "restart_active", targetRunId: active.id };
	return { type: "start_immediately" };
}

/** The thread-setting commands a continuation needs first: only what was asked and differs. */
export function modeCommands(
	thread: ThreadShell,
	args: {
		runtime_mode?: RuntimeMode;
		interaction_mode?: InteractionMode;
		title?: string;
	},
	newId: () => string,
): (Record<string, unknown> & { type: string; commandId: string })[] {
	const commands: (Record<string, unknown> & {
		type: string;
		commandId: string;
	})[] = [];
	// A title with a follow-up renames the thread (gateways send one with every dispatch).
	const title = args.title?.trim();
	if (title && title !== thread.title) {
		commands.push({
			type: "thread.metadata.update",
			commandId: newId(),
			threadId: thread.id,
			title,
		});
	}
	if (
		args.runtime_mode !== undefined &&
		args.runtime_mode !== thread.runtimeMode
	) {
		commands.push({
			type: "thread.runtime-mode.set",
			commandId: newId(),
			threadId: thread.id,
			runtimeMode: args.runtime_mode,
		});
	}
	if (
		args.interaction_mode !== undefined &&
		args.interaction_mode !== thread.interactionMode
	) {
		commands.push({
			type: "thread.interaction-mode.set",
			commandId: newId(),
			threadId: thread.id,
			interactionMode: args.interaction_mode,
		});
	}
	return commands;
}
