/**
 * `t3_threads` paging: one page of matching threads merged across machines in list order, and
 * the opaque keyset cursor to the next (the last row's sort key and a fingerprint of the filters
 * it was made for).
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { ProjectShell, ThreadShell } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { invalidCursor, openCursor, sealCursor } from "./cursor.ts";
import type { ListFilters } from "./list.ts";
import { nextMatch, type RowFilter, type Source } from "./list-filter.ts";
import type { MessageMatch } from "./message-search.ts";

export interface Candidate {
	entry: FleetMachine;
	thread: ThreadShell;
	project: ProjectShell;
	match: MessageMatch | null;
}

const current = (s: Source) => s.list.threads[s.index] as ThreadShell;

/**
 * Whether source a's current thread sorts before b's (list order: `updatedAt` desc, then id,
 * as compareThreads), read from the listings' key arrays rather than from the shells.
 */
function before(a: Source, b: Source): boolean {
	const at = a.list.times[a.index] as string;
	const bt = b.list.times[b.index] as string;
	if (at !== bt) return at > bt;
	return (a.list.ids[a.index] as string) < (b.list.ids[b.index] as string);
}

/**
 * The first `count` matching threads across machines in list order: a k-way merge of the
 * machines' sorted lists (a binary heap of their current threads), so a page reads about
 * `count` threads plus one per machine, however many the machines hold.
 */
export function merge(
	sources: Source[],
	filter: RowFilter,
	count: number,
): Candidate[] {
	const heap = sources.filter((s) => s.index < s.list.threads.length);
	const less = (a: number, b: number) =>
		before(heap[a] as Source, heap[b] as Source);
	const siftDown = (from: number) => {
		let i = from;
		for (;;) {
			const l = 2 * i + 1;
			const r = l + 1;
			let m = i;
			if (l < heap.length && less(l, m)) m = l;
			if (r < heap.length && less(r, m)) m = r;
			if (m === i) return;
			[heap[i], heap[m]] = [heap[m] as Source, heap[i] as Source];
			i = m;
		}
	};
	for (let i = (heap.length >> 1) - 1; i >= 0; i -= 1) siftDown(i);
	const out: Candidate[] = [];
	while (out.length < count && heap.length > 0) {
		const top = heap[0] as Source;
		const thread = current(top);
		out.push({
			entry: top.entry,
			thread,
			project: top.projects.get(thread.projectId) as ProjectShell,
			match: top.hits?.matches.get(thread.id) ?? null,
		});
		top.index = nextMatch(top, top.index + 1, filter);
		if (top.index >= top.list.threads.length) {
			const last = heap.pop() as Source;
			if (heap.length === 0) break;
			heap[0] = last;
		}
		siftDown(0);
	}
	return out;
}

function fingerprint(f: ListFilters): string {
	return JSON.stringify([
		f.machine ?? null,
		f.project ?? null,
		f.state ?? "all",
		(f.query ?? "").toLowerCase(),
		f.archived === true,
	]);
}

const TOOL = "t3_threads";

export function encodeCursor(
	deps: ThreadDeps,
	filters: ListFilters,
	last: Candidate,
): string {
	return sealCursor(deps.db, TOOL, {
		f: fingerprint(filters),
		u: last.thread.updatedAt ?? "",
		t: last.thread.id,
	});
}

export function decodeCursor(
	deps: ThreadDeps,
	filters: ListFilters,
	cursor: string,
): { at: string; id: string } {
	const parsed = openCursor(deps.db, TOOL, cursor) as {
		f?: unknown;
		u?: unknown;
		t?: unknown;
	} | null;
	if (
		typeof parsed?.f !== "string" ||
		typeof parsed.u !== "string" ||
		typeof parsed.t !== "string"
	)
		throw invalidCursor();
	if (parsed.f !== fingerprint(filters))
		throw invalidCursor(
			"it was made for other filters: repeat that call's machine, project, state, query and archived with it",
		);
	return { at: parsed.u, id: parsed.t };
}
