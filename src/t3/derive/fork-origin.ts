/**
 * Where a fork came from and what it inherited, as T3 0.1.x reports it (REVIEW-fa93027.md §2b):
 * the thread's `forkedFrom {type:"run", threadId, runId}` (`ThreadForkServiceV2.plan`, idx
 * 69176170854), else its `lineage`; and the projection's `visibleTurnItems` rows marked
 * `inherited`. T3 copies no runs or messages into a fork: the source's conversation up to the
 * forked run is only there (`buildVisibleTurnItems`, idx 70189692800). Unknown rows are skipped.
 */
import type { ThreadProjection, ThreadShell } from "../model.ts";

export interface ForkOrigin {
	thread_id: string;
	/** The source's run the fork continues from; null where T3 did not say (lineage only). */
	run_id: string | null;
}

type Loose = Record<string, unknown>;
const isLoose = (v: unknown): v is Loose =>
	typeof v === "object" && v !== null && !Array.isArray(v);

export function forkOrigin(thread: ThreadShell): ForkOrigin | null {
	const from = thread.forkedFrom;
	if (isLoose(from) && typeof from.threadId === "string" && from.threadId)
		return {
			thread_id: from.threadId,
			run_id: typeof from.runId === "string" ? from.runId : null,
		};
	if (typeof from === "string" && from !== "")
		return { thread_id: from, run_id: null };
	const lineage = thread.lineage;
	if (
		isLoose(lineage) &&
		lineage.relationshipToParent === "fork" &&
		typeof lineage.parentThreadId === "string"
	)
		return { thread_id: lineage.parentThreadId, run_id: null };
	return null;
}

/**
 * The inherited conversation's messages, oldest first: those of its last `turns` runs (as
 * `t3_thread` shows a thread's own last runs), without streaming drafts.
 */
export function inheritedMessages(
	projection: ThreadProjection,
	turns: number,
): { role: "user" | "assistant"; text: string }[] {
	const rows = Array.isArray(projection.visibleTurnItems)
		? (projection.visibleTurnItems as unknown[])
		: [];
	const runs: {
		runId: unknown;
		messages: { role: "user" | "assistant"; text: string }[];
	}[] = [];
	for (const row of rows) {
		if (!isLoose(row) || row.visibility !== "inherited" || !isLoose(row.item))
			continue;
		const item = row.item;
		if (
			(item.type !== "user_message" && item.type !== "assistant_message") ||
			item.streaming === true ||
			typeof item.text !== "string"
		)
			continue;
		const message = {
			role:
				item.type === "user_message"
					? ("user" as const)
					: ("assistant" as const),
			text: item.text,
		};
		const last = runs.at(-1);
		if (last && last.runId === item.runId) last.messages.push(message);
		else runs.push({ runId: item.runId, messages: [message] });
	}
	return runs.slice(-turns).flatMap((r) => r.messages);
}
