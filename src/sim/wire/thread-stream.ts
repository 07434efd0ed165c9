/**
 * `orchestration.subscribeThread` (PROTOCOL.md §8.3): a projection snapshot, or a replay of
 * the thread's stored events after `afterSequence` when it fits the 128-event budget, then
 * `synchronized` and every live domain event as `{kind:"event", sequence, event}`.
 */

import { simHas } from "../compat.ts";
import type { SimContext } from "../context.ts";
import { boundedWindow } from "../engine/bounded-window.ts";
import type { Outcome } from "../engine/engine.ts";
import type { LoggedEvent } from "../engine/store.ts";

const REPLAY_BUDGET = 128;

export interface ThreadStreamInput {
	threadId: string;
	afterSequence?: number;
	requestCompletionMarker?: boolean;
	/** Newer T3: the snapshot may be a bounded window (the pre-release ignores it). */
	acceptBoundedSnapshot?: boolean;
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
			after === undefined ? [] : eventsAfter(store.events, thread.id, after);
		if (
			after === undefined ||
			after > store.head() ||
			events.length > REPLAY_BUDGET
		) {
			const projection = store.projection(thread);
			initial.push(
				input.acceptBoundedSnapshot === true &&
					simHas(ctx.compat, "boundedSnapshot")
					? {
							kind: "snapshot",
							snapshotSequence: thread.lastSequence,
							...boundedWindow(projection),
						}
					: {
							kind: "snapshot",
							snapshotSequence: thread.lastSequence,
							projection,
						},
			);
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

/**
 * The thread's stored events after `after`. The log is in sequence order: the scan starts there
 * (found by bisection) instead of at the beginning, as an indexed event store would, so a
 * resume costs what happened since, not the whole history.
 */
function eventsAfter(
	events: LoggedEvent[],
	threadId: string,
	after: number,
): LoggedEvent[] {
	let lo = 0;
	let hi = events.length;
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		if ((events[mid] as LoggedEvent).sequence <= after) lo = mid + 1;
		else hi = mid;
	}
	const out: LoggedEvent[] = [];
	for (let i = lo; i < events.length; i++) {
		const e = events[i] as LoggedEvent;
		if (e.threadId === threadId) out.push(e);
	}
	return out;
}
