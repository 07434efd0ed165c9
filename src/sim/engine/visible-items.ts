/**
 * A projection's `visibleTurnItems`, as T3's projector builds them (`buildVisibleTurnItems`, idx
 * 70189692800; REVIEW-fa93027.md §2b): a thread's own items (`local`); for a fork, first the
 * source's items at or before the forked run (`inherited`, read from the source as it is now),
 * then a synthetic "Forked from conversation" marker. A fork's runs, messages and turnItems stay
 * its own: T3 copies nothing into them.
 */
import type { Row } from "./rows.ts";
import type { ThreadState } from "./store.ts";

type Projected = Record<string, unknown> & { item: Row };

function sortedItems(thread: ThreadState): Row[] {
	return [...thread.rows.turnItems].sort(
		(a, b) => (a.ordinal as number) - (b.ordinal as number),
	);
}

function local(thread: ThreadState): Projected[] {
	return sortedItems(thread).map((item) => ({
		visibility: "local",
		sourceThreadId: thread.id,
		sourceItemId: item.id,
		item,
	}));
}

/** `makeForkMarkerTurnItem` (idx 70189692800): the fork's own synthetic timeline row. */
function forkMarker(fork: ThreadState, sourceId: string, runId: string): Row {
	const at = fork.app.createdAt;
	return {
		id: `turn-item:fork:${fork.id}`,
		threadId: fork.id,
		runId: null,
		nodeId: null,
		providerTurnId: null,
		nativeItemRef: null,
		parentItemId: null,
		ordinal: 0,
		status: "completed",
		title: "Forked from conversation",
		startedAt: null,
		completedAt: at,
		updatedAt: at,
		type: "fork",
		source: { type: "run", threadId: sourceId, runId },
		targetThreadId: fork.id,
	};
}

/**
 * `visibleTurnItemsThroughRun`: what the source itself inherited (its own fork's rows and
 * marker), then its items of runs up to the forked run's ordinal. Items of no run count only
 * for imported V1 history, which the simulator never has.
 */
function throughRun(
	threads: ReadonlyMap<string, ThreadState>,
	source: ThreadState,
	runId: string,
	depth: number,
): Projected[] {
	const run = source.rows.runs.find((r) => r.id === runId);
	if (!run) return [];
	const ordinalOf = new Map(
		source.rows.runs.map((r) => [r.id, r.ordinal as number]),
	);
	const prefix = visibleRows(threads, source, depth + 1)
		.filter((row) => row.visibility !== "local")
		.map(({ position: _, ...row }) => ({ ...row, visibility: "inherited" }));
	const own = sortedItems(source)
		.filter((item) => {
			const ordinal =
				typeof item.runId === "string" ? ordinalOf.get(item.runId) : undefined;
			return ordinal !== undefined && ordinal <= (run.ordinal as number);
		})
		.map((item) => ({
			visibility: "inherited",
			sourceThreadId: source.id,
			sourceItemId: item.id,
			item,
		}));
	return [...prefix, ...own];
}

function visibleRows(
	threads: ReadonlyMap<string, ThreadState>,
	thread: ThreadState,
	depth = 0,
): Projected[] {
	const from = thread.app.forkedFrom as Row | null | undefined;
	const source =
		from?.type === "run" && typeof from.threadId === "string"
			? threads.get(from.threadId)
			: undefined;
	// A source that is gone (or a lineage loop, which T3 cannot make) leaves the thread's own.
	const rows =
		source && typeof from?.runId === "string" && depth < 64
			? [
					...throughRun(threads, source, from.runId, depth),
					{
						visibility: "synthetic",
						sourceThreadId: source.id,
						sourceItemId: `turn-item:fork:${thread.id}`,
						item: forkMarker(thread, source.id, from.runId),
					},
					...local(thread),
				]
			: local(thread);
	return rows.map((row, position) => ({ position, ...row }));
}

export function visibleTurnItems(
	threads: ReadonlyMap<string, ThreadState>,
	thread: ThreadState,
): Record<string, unknown>[] {
	return visibleRows(threads, thread);
}

/** The shell's `visibleItemCount`, without building the rows for a thread that is no fork. */
export function visibleItemCount(
	threads: ReadonlyMap<string, ThreadState>,
	thread: ThreadState,
): number {
	const from = thread.app.forkedFrom as Row | null | undefined;
	return from?.type === "run"
		? visibleRows(threads, thread).length
		: thread.rows.turnItems.length;
}
