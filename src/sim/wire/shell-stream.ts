/**
 * `orchestration.subscribeShell` (PROTOCOL.md §8.2): authoritative or metadata-only snapshot,
 * replayed coalesced deltas after `afterSequence`, `synchronized`, then live `thread.updated`
 * items carrying each thread's current shell, coalesced per thread inside `coalesceMs` (the
 * newest state per thread per window, as a real server does; intermediate states are skipped).
 */
import type { SimContext } from "../context.ts";
import type { ThreadState } from "../engine/store.ts";

const REPLAY_BUDGET = 1000;

export interface ShellStreamInput {
	afterSequence?: number;
	requestCompletionMarker?: boolean;
}

/** Starts the stream; `push` queues values for the socket. Returns the disposer. */
export function openShellStream(
	ctx: SimContext,
	input: ShellStreamInput,
	push: (values: unknown[]) => void,
): () => void {
	const { store } = ctx;
	const head = store.head();
	const after = input.afterSequence;
	const initial: unknown[] = [];
	const authoritative =
		after === undefined || after > head || head - after > REPLAY_BUDGET;
	// A resumed subscription gets the metadata snapshot only: building every thread's shell for
	// it was half of what 500 simulators spent on a connector's start.
	const full = store.shellSnapshot({ threads: authoritative });
	const metadata = {
		kind: "snapshot",
		snapshot: { ...full, threads: [], archivedThreads: [] },
		resolvedRepositoryIdentityRoots: [...store.projects.values()].map(
			(p) => p.row.workspaceRoot,
		),
	};
	if (authoritative) {
		initial.push({ kind: "snapshot", snapshot: full }, metadata);
	} else {
		initial.push(metadata, ...replay(ctx, after));
	}
	if (input.requestCompletionMarker) initial.push({ kind: "synchronized" });
	push(initial);

	const dirty = new Set<string>();
	let cancelTimer: (() => void) | undefined;
	const flush = () => {
		cancelTimer = undefined;
		const threads = [...dirty]
			.map((id) => store.threads.get(id))
			.filter((t): t is ThreadState => t !== undefined);
		dirty.clear();
		threads.sort((a, b) => a.lastSequence - b.lastSequence);
		if (threads.length > 0) push(threads.map((t) => threadItem(ctx, t)));
	};
	const unsubscribe = store.subscribe((entry) => {
		if (entry.threadId === null) {
			// A project created while subscribed (projects.mutate) is told at once.
			const project = entry.projectId && store.projects.get(entry.projectId);
			if (project)
				push([
					{
						kind: "project.updated",
						sequence: entry.sequence,
						project: project.row,
					},
				]);
			return;
		}
		dirty.add(entry.threadId);
		// A window opens with the first change and closes coalesceMs later (§8.2: ≤ 50 ms).
		if (ctx.coalesceMs <= 0) flush();
		else cancelTimer ??= ctx.scheduler.later(ctx.coalesceMs, flush);
	});
	return () => {
		unsubscribe();
		cancelTimer?.();
	};
}

/** Current state of everything that changed after `after`, ascending by last sequence. */
function replay(ctx: SimContext, after: number): unknown[] {
	const items: { sequence: number; item: unknown }[] = [];
	for (const project of ctx.store.projects.values()) {
		if (project.lastSequence > after) {
			items.push({
				sequence: project.lastSequence,
				item: {
					kind: "project.updated",
					sequence: project.lastSequence,
					project: project.row,
				},
			});
		}
	}
	for (const thread of ctx.store.threads.values()) {
		if (thread.lastSequence > after)
			items.push({
				sequence: thread.lastSequence,
				item: threadItem(ctx, thread),
			});
	}
	return items.sort((a, b) => a.sequence - b.sequence).map((i) => i.item);
}

/** Archived and deleted threads leave the active list (PROTOCOL.md §8.2: thread.removed, location active). */
function threadItem(ctx: SimContext, thread: ThreadState): unknown {
	if (thread.app.deletedAt || thread.app.archivedAt) {
		return {
			kind: "thread.removed",
			sequence: thread.lastSequence,
			location: "active",
			threadId: thread.id,
		};
	}
	return {
		kind: "thread.updated",
		sequence: thread.lastSequence,
		location: "active",
		thread: ctx.store.threadShell(thread),
	};
}
