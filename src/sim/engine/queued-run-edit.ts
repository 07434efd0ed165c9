/**
 * `queued-run.edit {runId, text, attachments?}` (PROTOCOL.md §6.4; the pre-release lacks it):
 * rewrites the message of a follow-up that has not started. The run keeps its id and place in
 * the queue; when it starts, it runs the new text.
 */

import { put, type RunHandle, type RunKit } from "../runs/run-rows.ts";
import type { Row } from "./rows.ts";
import { nowIso } from "./rows.ts";

/** The last sequence written, or the refusal T3 gives for a run that is no longer queued. */
export function editQueuedRun(
	kit: RunKit,
	h: RunHandle | undefined,
	runId: string,
	text: string,
	attachments: Row[] | undefined,
): number | string {
	if (h?.run.status !== "queued") return `Run ${runId} is not queued.`;
	const messageId = String(h.run.userMessageId);
	const message = kit.store.find(h.thread, "messages", messageId);
	if (!message) return `Run ${runId} has no message to edit.`;
	const at = nowIso();
	h.prompt = text;
	put(
		kit,
		h,
		"messages",
		{
			...message,
			text,
			attachments: attachments ?? message.attachments,
			updatedAt: at,
		},
		"message.updated",
	);
	const item = kit.store.find(
		h.thread,
		"turnItems",
		`turn-item:message:${messageId}`,
	);
	if (item)
		put(
			kit,
			h,
			"turnItems",
			{ ...item, text, updatedAt: at },
			"turn-item.updated",
		);
	return kit.store.head();
}
