/**
 * `thread.user-input.dismiss` (PROTOCOL.md §6.6, newer): closes a pending question without
 * answering. Only message-mode requests (`responseCapability.type === "message"`) may be
 * dismissed; the request ends `resolved`, its node and turn item `cancelled` (as upstream's
 * engine records it), and the waiting agent goes on without an answer.
 */

import { endRequest } from "../runs/run-lifecycle.ts";
import type { RunHandle, RunKit } from "../runs/run-rows.ts";
import type { Row } from "./rows.ts";
import type { ThreadState } from "./store.ts";

/** Returns the command's last sequence, or the refusal message. */
export function dismissRequest(
	kit: RunKit,
	h: RunHandle | undefined,
	thread: ThreadState,
	request: Row,
): number | string {
	if (request.kind !== "user_input")
		return `Runtime request ${request.id} is not a user-input request.`;
	if (request.status !== "pending")
		return `Runtime request ${request.id} is not pending.`;
	const capability = (request.responseCapability ?? {}) as { type?: string };
	if (capability.type !== "message")
		return `Runtime request ${request.id} cannot be dismissed: the provider waits for a live answer.`;
	return endRequest(kit, h, thread, request, {
		recorded: {},
		closedAs: "cancelled",
		answer: { dismissed: true },
	});
}
