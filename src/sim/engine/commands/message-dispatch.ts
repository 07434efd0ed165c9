/**
 * `message.dispatch` (PROTOCOL.md §6.3): a user message starts a run, queues behind the busy
 * one, or steers / restarts the active run, as its dispatch mode (or `deliveryIntent`) says and
 * its provider allows. Also how a message's attachment references resolve.
 */
import { TERMINAL_RUN_STATUSES } from "../../../t3/model.ts";
import {
	queuesMessages,
	resolveDeliveryIntent,
	steersLive,
} from "../../agent/steering.ts";
import { simHas } from "../../compat.ts";
import { restartRun, steerRun } from "../../runs/run-steer.ts";
import type { CommandHandler, EngineCore } from "../engine-core.ts";
import type { Row } from "../rows.ts";
import { activeRun, startRun } from "../run-queue.ts";
import type { ThreadState } from "../store.ts";
import { isBusy } from "../thread-app.ts";

/** A message's attachment references, each one persisted first (attachments.ts); or why not. */
export function attachmentRefs(core: EngineCore, raw: unknown): Row[] | string {
	if (!Array.isArray(raw) || raw.length === 0) return [];
	const refs: Row[] = [];
	for (const ref of raw as Row[]) {
		const stored = core.attachments?.get(String(ref?.id));
		if (!stored) return `Attachment ${String(ref?.id)} was not persisted.`;
		refs.push(stored);
	}
	return refs;
}

/**
 * `steer_active` / `restart_active` (PROTOCOL.md §6.3): the outcome, or undefined when a
 * steer raced the end of its target and becomes an ordinary `start_immediately`.
 */
function steerOrRestart(
	core: EngineCore,
	thread: ThreadState,
	c: Record<string, unknown>,
	mode: Record<string, unknown>,
): number | string | undefined {
	const targetRunId = String(mode.targetRunId);
	const target = core.store.find(thread, "runs", targetRunId);
	if (!target) return `Target run ${targetRunId} was not found.`;
	const h = core.handles.get(targetRunId);
	const status = String(h?.run.status ?? target.status);
	const message = {
		messageId: String(c.messageId),
		text: String(c.text),
		createdBy: "user",
		creationSource: String(c.creationSource),
	};
	if (mode.type === "steer_active") {
		if (!h || status === "waiting" || TERMINAL_RUN_STATUSES.has(status))
			return undefined;
		if (status !== "running" || h.interrupting)
			return `Target run ${targetRunId} is not running; only a running run can be steered.`;
		if (!steersLive(h.instanceId))
			return `Provider ${h.instanceId} does not support steering an active turn; it steers only by interrupt and restart (restart_active).`;
		return steerRun(core.kit, h, message);
	}
	if (
		!h ||
		h.interrupting ||
		!["preparing", "starting", "running"].includes(status)
	)
		return `Target run ${targetRunId} is not active.`;
	return restartRun(core.kit, h, message);
}

export const dispatchMessage: CommandHandler = (core, thread, c) => {
	let mode = (c.dispatchMode ?? {}) as Record<string, unknown>;
	// The pre-release engine drops `deliveryIntent` unread (compat.ts).
	const intent = simHas(core.compat, "deliveryIntent")
		? c.deliveryIntent
		: undefined;
	if (
		typeof intent === "string" &&
		(mode.type === "start_immediately" || mode.type === "queue_after_active")
	)
		mode = resolveDeliveryIntent(intent, activeRun(core, thread));
	if (mode.type === "steer_active" || mode.type === "restart_active") {
		const steered = steerOrRestart(core, thread, c, mode);
		if (steered !== undefined) return steered;
	}
	const busy = isBusy(thread);
	const instance = String(thread.app.providerInstanceId);
	if (busy && mode.type !== "queue_after_active" && !queuesMessages(instance))
		return `Provider ${instance} does not accept queued messages while a run is active; send the message with queue_after_active to queue it on the server.`;
	const attachments = attachmentRefs(core, c.attachments);
	if (typeof attachments === "string") return attachments;
	return startRun(core, thread, {
		messageId: String(c.messageId),
		text: String(c.text),
		attachments,
		modelSelection:
			(c.modelSelection as Row | undefined) ??
			(thread.app.modelSelection as Row),
		createdBy: "user", // the socket handler forces createdBy (OBSERVED.md §4)
		creationSource: String(c.creationSource),
		status: busy ? "queued" : "starting",
		inputIntent: busy ? "queued_turn" : "turn_start",
		...(typeof c.notification === "object" && c.notification !== null
			? { notification: c.notification as Record<string, unknown> }
			: {}),
	});
};
