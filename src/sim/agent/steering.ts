/**
 * How each simulated provider takes a message while its run is going (RELEASED-0.1.md §1
 * "`message.dispatch` `deliveryIntent`", PROTOCOL.md §6.3), and `deliveryIntent` resolved against
 * the thread's state as T3 0.1.x does it. The `grok` driver steers only by interrupt-and-restart
 * and takes no queued messages (T3's Grok capability declaration); instance `restartsteer`
 * (model `restartsteer/steady`) runs on it, so a thread can be steered only by restart.
 */
import { SESSION_CAPABILITIES } from "../engine/rows.ts";

const RESTART_ONLY = new Set(["grok", "restartsteer"]);

export function steersLive(instanceId: string): boolean {
	return !RESTART_ONLY.has(instanceId);
}

/** `start_immediately` on a busy thread queues only where the provider takes queued messages. */
export function queuesMessages(instanceId: string): boolean {
	return !RESTART_ONLY.has(instanceId);
}

/** The capabilities a provider session of this instance advertises. */
export function sessionCapabilities(instanceId: string) {
	const live = steersLive(instanceId);
	return {
		...SESSION_CAPABILITIES,
		turns: {
			...SESSION_CAPABILITIES.turns,
			supportsActiveSteering: live,
			supportsSteeringByInterruptRestart: true,
			supportsQueuedMessages: queuesMessages(instanceId),
		},
	};
}

export const DELIVERY_INTENTS = ["auto", "steer", "restart"] as const;

/**
 * What an untargeted message with `deliveryIntent` becomes: steer the running run where the
 * provider can, else restart it; `restart` restarts the active run; with nothing to steer or
 * restart it queues behind a busy run or starts (`auto` steers like `steer`).
 */
export function resolveDeliveryIntent(
	intent: string,
	active: { id: string; status: string; instanceId: string } | undefined,
): Record<string, unknown> {
	if (!active) return { type: "queue_after_active" };
	if (intent === "restart")
		return { type: "restart_active", targetRunId: active.id };
	if (active.status !== "running") return { type: "queue_after_active" };
	return steersLive(active.instanceId)
		? { type: "steer_active", targetRunId: active.id }
		: { type: "restart_active", targetRunId: active.id };
}
