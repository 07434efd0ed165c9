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
import { listId, listTime } from "./thread-index.ts";

export interface Candidate {
	entry: FleetMachine;
	thread: ThreadShell;
	project: ProjectShell;
	match: MessageMatch | null;
}

/**
 * The first `count` matching threads across machines in list order (`updatedAt` desc, then id,
 * as compareThreads): a k-way merge of the machines' sorted lists (a binary heap of their
 * current threads), so a page reads about `count` threads plus one per machine, however many
 * the machines hold. The heap holds source numbers and compares their current threads' time
 * keys from one local array: a 500-machine page is ~2 000 comparisons, and reading each
 * machine's listing for each of them was most of its cost.
 */
export function merge(
	sources: Source[],
	filter: RowFilter,
	count: number,
): Candidate[] {
	const live = sources.filter((s) => s.index < s.list.threads.length);
	const key = new Float64Array(live.length);
	const setKey = (slot: number) => {
		const s = live[slot] as Source;
		key[slot] = s.list.keys[s.index] as number;
	};
	for (let slot = 0; slot < live.length; slot += 1) setKey(slot);
	/** Whether slot a's current thread sorts before slot b's. */
	const before = (a: number, b: number): boolean => {
		const ka = key[a] as number;
		const kb = key[b] as number;
		// Equal keys, or a time not in T3's form (NaN compares false both ways): the texts decide.
		if (ka > kb) return true;
		if (ka < kb) return false;
		const sa = live[a] as Source;
		const sb = live[b] as Source;
		const at = listTime(sa.list, sa.index);
		const bt = listTime(sb.list, sb.index);
		if (at !== bt) return at > bt;
		return listId(sa.list, sa.index) < listId(sb.list, sb.index);
	};
	const heap = new Int32Array(live.length);
	let size = live.length;
	for (let i = 0; i < size; i += 1) heap[i] = i;
	const siftDown = (from: number) => {
		let i = from;
		const slot = heap[i] as number;
		for (;;) {
			const l = 2 * i + 1;
			if (l >= size) break;
			const r = l + 1;
			const child =
				r < size && before(heap[r] as number, heap[l] as number) ? r : l;
			if (!before(heap[child] as number, slot)) break;
			heap[i] = heap[child] as number;
			i = child;
		}
		heap[i] = slot;
	};
	for (let i = (size >> 1) - 1; i >= 0; i -= 1) siftDown(i);
	const out: Candidate[] = [];
	while (out.length < count && size > 0) {
		const slot = heap[0] as number;
		const top = live[slot] as Source;
		const thread = top.list.threads[top.index] as ThreadShell;
		out.push({
			entry: top.entry,
			thread,
			project: top.projects.get(thread.projectId) as ProjectShell,
			match: top.hits?.matches.get(thread.id) ?? null,
		});
		top.index = nextMatch(top, top.index + 1, filter);
		if (top.index >= top.list.threads.length) {
			size -= 1;
			if (size === 0) break;
			heap[0] = heap[size] as number;
		} else setKey(slot);
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
