/**
 * `orchestration.getTurnItem {threadId, itemId, revision?}` → `{item: TurnItem | null}`
 * (PROTOCOL.md §5, newer servers only): one timeline item with the output the stream withholds.
 * An unknown thread fails like `getThreadProjection`; an unknown item is `{item: null}`.
 */
import { withOutput } from "../agent/command-output.ts";
import type { Outcome } from "../engine/engine.ts";
import type { Store } from "../engine/store.ts";

export function getTurnItem(
	store: Store,
	payload: Record<string, unknown>,
): Outcome {
	for (const key of ["threadId", "itemId"])
		if (typeof payload[key] !== "string")
			return { die: `Missing key\n  at ["${key}"]` };
	const threadId = payload.threadId as string;
	const thread = store.threads.get(threadId);
	if (!thread || thread.app.deletedAt)
		return {
			fail: {
				_tag: "OrchestrationV2GetThreadProjectionError",
				threadId,
				message: `Failed to load orchestration V2 thread ${threadId}.`,
			},
		};
	const item = thread.rows.turnItems.find((i) => i.id === payload.itemId);
	return {
		ok: { item: item ? structuredClone(withOutput(thread, item)) : null },
	};
}
