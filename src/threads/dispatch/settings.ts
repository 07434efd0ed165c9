/**
 * The run settings `t3_dispatch` carries to T3 (CONTRACT.md "New optional t3_dispatch
 * arguments"): how a follow-up meets a run still going (`dispatchMode`, PROTOCOL.md §6.3),
 * and the thread's runtime / interaction mode, which are thread settings in V2 (§6.1, §6.8).
 */

import { sessionSteer } from "../../t3/capabilities/steering.ts";
import {
	BUSY_RUN_STATUSES,
	type ThreadProjection,
	type ThreadShell,
} from "../../t3/model.ts";

export type DispatchMode = "queue" | "steer" | "restart";
export type RuntimeMode =
	| "full-access"
	| "approval-required"
	| "auto-accept-edits"
	| "auto";
export type InteractionMode = "default" | "plan";

/** The run to steer or restart: the newest one that has not finished or queued. */
function activeRun(projection: ThreadProjection) {
	return projection.runs
		.filter((r) => ["preparing", "starting", "running"].includes(r.status))
		.sort((a, b) => b.ordinal - a.ordinal)[0];
}

/** What `t3_dispatch` sends so a follow-up meets the thread's run as asked. */
export interface DeliveryPlan {
	dispatchMode: Record<string, unknown>;
	/** Sent only to servers whose answer showed they take it (t3/delivery-intent.ts). */
	deliveryIntent?: "steer" | "restart";
}

/**
 * `queue` (the default) waits its turn: `queue_after_active` behind a busy run, which T3 queues
 * on every provider (`start_immediately` queues only where the provider takes queued messages).
 * `steer` joins the running run and `restart` interrupts it and starts again with the message.
 * Where the server takes `deliveryIntent`, it resolves steer/restart against its own state (no
 * race with a run that ends meanwhile, and it knows how the provider steers). Elsewhere the
 * explicit modes: `steer_active` where the provider steers live, `restart_active` where it steers
 * only by restart (as its session reports), and a queue where it cannot steer at all or the
 * run is not `running` yet. With nothing going, all three start a run.
 */
export function planDelivery(
	mode: DispatchMode | undefined,
	projection: ThreadProjection,
	serverIntent: boolean,
): DeliveryPlan {
	const busy = projection.runs.some((r) => BUSY_RUN_STATUSES.has(r.status));
	const queue: DeliveryPlan = {
		dispatchMode: { type: busy ? "queue_after_active" : "start_immediately" },
	};
	if (mode !== "steer" && mode !== "restart") return queue;
	if (serverIntent)
		return {
			dispatchMode: { type: "start_immediately" },
			deliveryIntent: mode,
		};
	const active = activeRun(projection);
	if (!active) return queue;
	if (mode === "restart")
		return { dispatchMode: { type: "restart_active", targetRunId: active.id } };
	if (active.status !== "running") return queue;
	const steer =
		sessionSteer(
			projection,
			active.modelSelection?.instanceId ??
				projection.thread.modelSelection?.instanceId,
		) ?? "live";
	if (steer === "none") return queue;
	return {
		dispatchMode: {
			type: steer === "live" ? "steer_active" : "restart_active",
			targetRunId: active.id,
		},
	};
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
