/**
 * `orchestration.subscribeThread` (PROTOCOL.md §8.3): a projection snapshot, or a replay of
 * the thread's stored events after `afterSequence` when it fits the 128-event budget, then
 * `synchronized` and every live domain event as `{kind:"event", sequence, event}`.
 */
import type { SimContext } from "./context.ts";
import type { Outcome } from "./engine.ts";

const REPLAY_BUDGET = 128;

export interface ThreadStreamInput {
	threadId: string;
	afterSequence?: number;
	requestCompletionMarker?: boolean;
}

/** Returns a failure Outcome, or the disposer of a started stream. */
export function openThreadStream(
	ctx: SimContext,
	input: ThreadStreamInput,
	push: (values: unknown[]) => void,
): Outcome | (() => void) {
	const { store } = ctx;
	const thread = store.threads.get(input.threadId);
	const after = input.afterSequence;
	const initial: unknown[] = [];
	if (!thread || thread.app.deletedAt) {
		// With a cursor the real engine answers an unknown thread with `synchronized` only (OBSERVED.md §5.8).
		if (after === undefined) return ctx.engine.getProjection(input.threadId);
	} else {
		const events =
			after === undefined
				? []
				: store.events.filter(
						(e) => e.threadId === thread.id && e.sequence > after,
					);
		if (
			after === undefined ||
			after > store.head() ||
			events.length > REPLAY_BUDGET
		) {
			initial.push({
				kind: "snapshot",
				snapshotSequence: thread.lastSequence,
				projection: store.projection(thread),
			});
		} else {
			for (const e of events)
				initial.push({ kind: "event", sequence: e.sequence, event: e.event });
		}
	}
	if (input.requestCompletionMarker) initial.push({ kind: "synchronized" });
	if (initial.length > 0) push(initial);
	return store.subscribe((entry) => {
		if (entry.threadId === input.threadId && entry.event)
			push([{ kind: "event", sequence: entry.sequence, event: entry.event }]);
	});
}
