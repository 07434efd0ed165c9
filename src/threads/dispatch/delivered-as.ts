/**
 * `t3_dispatch` `delivered_as`: what T3 did with the message, read from the thread after the
 * dispatch, not from what was asked (a server without `deliveryIntent` would have queued a
 * steer without a word): a run of its own (`started`, or `queued` behind a busy one), or joined
 * a run that was going (`steered`, or `restarted` when that run got a new attempt for it).
 */
import type { Run, ThreadProjection } from "../../t3/model.ts";

export type DeliveredAs = "started" | "queued" | "steered" | "restarted";

type Attempt = { runId?: unknown; reason?: unknown };

/** Restart attempts of a run (`reason: "steering_restart"`, PROTOCOL.md §6.3). */
function restarts(projection: ThreadProjection | undefined, runId: string) {
	const attempts = Array.isArray(projection?.attempts)
		? (projection.attempts as Attempt[])
		: [];
	return attempts.filter(
		(a) => a.runId === runId && a.reason === "steering_restart",
	).length;
}

export function deliveredAs(
	command: Record<string, unknown>,
	messageId: string,
	run: Run | null,
	after: ThreadProjection,
	before: ThreadProjection | undefined,
): DeliveredAs {
	const mode = (command.dispatchMode ?? {}) as { type?: unknown };
	if (!run) {
		// Not in the thread yet: what was asked is all there is to say.
		if (mode.type === "restart_active" || command.deliveryIntent === "restart")
			return "restarted";
		if (mode.type === "steer_active" || command.deliveryIntent === "steer")
			return "steered";
		return mode.type === "queue_after_active" ? "queued" : "started";
	}
	if (run.userMessageId === messageId)
		return run.status === "queued" ? "queued" : "started";
	if (mode.type === "restart_active") return "restarted";
	if (mode.type === "steer_active") return "steered";
	// Resolved by the server (deliveryIntent): a new restart attempt says it restarted.
	if (before !== undefined)
		return restarts(after, run.id) > restarts(before, run.id)
			? "restarted"
			: "steered";
	return command.deliveryIntent === "restart" ? "restarted" : "steered";
}
