/**
 * `thread.user-input.dismiss` (PROTOCOL.md §6.6, newer): closes a pending question without
 * answering. Only message-mode requests (`responseCapability.type === "message"`) may be
 * dismissed; the request ends `resolved`, its node and turn item `cancelled` (as upstream's
 * engine records it), and the waiting agent goes on without an answer.
 */
import { nowIso, type Row } from "./rows.ts";
import type { RunHandle, RunKit } from "./run-rows.ts";
import type { EventEnvelope, ThreadState } from "./store.ts";

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
	const at = nowIso();
	const envelope: EventEnvelope = { nodeId: request.nodeId as string };
	const node = kit.store.find(thread, "nodes", request.nodeId as string);
	if (node?.runId) envelope.runId = node.runId as string;
	kit.store.upsert(
		thread,
		"runtimeRequests",
		{ ...request, status: "resolved", resolvedAt: at },
		"runtime-request.updated",
		envelope,
	);
	if (node)
		kit.store.upsert(
			thread,
			"nodes",
			{ ...node, status: "cancelled", completedAt: at },
			"node.updated",
			envelope,
		);
	const item = thread.rows.turnItems.find((i) => i.requestId === request.id);
	if (item)
		kit.store.upsert(
			thread,
			"turnItems",
			{ ...item, status: "cancelled", completedAt: at, updatedAt: at },
			"turn-item.updated",
			envelope,
		);
	const sequence = kit.store.head();
	if (h?.pending?.requestId === request.id)
		h.pending.resolve({ dismissed: true });
	return sequence;
}
