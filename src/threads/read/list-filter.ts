/**
 * `t3_threads` filtering: one machine's listing walked in list order, stopping at the threads
 * that pass the state and query filters (title / latest message text, or T3's message search),
 * without reading the threads that cannot match.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { ProjectShell, ThreadShell } from "../../t3/model.ts";
import type { StateFilter } from "./list.ts";
import type { MessageMatch } from "./message-search.ts";
import {
	allShown,
	firstAfter,
	haystackText,
	indexOfId,
	inState,
	type Listing,
	listId,
	SEPARATOR,
	search,
} from "./thread-index.ts";

/** The filters every row must pass, besides its machine's projects. */
export interface RowFilter {
	state: StateFilter;
	/** Lower-cased. */
	query: string | undefined;
}

/**
 * One machine's matching threads, walked in list order: `index` is the current one
 * (`threads.length` once there are no more).
 */
export interface Source {
	entry: FleetMachine;
	projects: Map<string, ProjectShell>;
	list: Listing;
	index: number;
	/** Threads T3's message search found here: their list indexes, ascending, and matches. */
	hits?: { at: Int32Array; matches: Map<string, MessageMatch> };
}

/** Whether the thread at `i` may be listed at all: an allowed (and chosen) project, not deleted. */
function shown(source: Source, i: number): boolean {
	const thread = source.list.threads[i] as ThreadShell;
	return source.projects.has(thread.projectId) && !thread.deletedAt;
}

/** Index of the first thread at or after `from` on this machine that passes every filter. */
export function nextMatch(
	source: Source,
	from: number,
	filter: RowFilter,
): number {
	const { list } = source;
	const n = list.threads.length;
	// Nearly always every thread of a machine may be shown: then none needs looking at.
	const all = allShown(list, source.projects);
	if (filter.query !== undefined) {
		const states = filter.state === "all" ? undefined : list.states;
		const texts = textMatches(list, filter.query);
		const hits = source.hits?.at ?? NO_HITS;
		let j = firstAtOrAfter(texts, from);
		let k = firstAtOrAfter(hits, from);
		for (;;) {
			const text = j < texts.length ? (texts[j] as number) : n;
			const hit = k < hits.length ? (hits[k] as number) : n;
			const i = Math.min(text, hit);
			if (i >= n) return n;
			if (
				(all || shown(source, i)) &&
				(states === undefined || states[i] === filter.state)
			)
				return i;
			if (i === text) j += 1;
			if (i === hit) k += 1;
		}
	}
	if (filter.state !== "all") {
		// Only the threads in that state: "what needs me?" skips the thousands settled.
		const only = inState(list, filter.state);
		const k0 = firstAtOrAfter(only, from);
		if (all) return k0 < only.length ? (only[k0] as number) : n;
		for (let k = k0; k < only.length; k += 1)
			if (shown(source, only[k] as number)) return only[k] as number;
		return n;
	}
	if (all) return Math.min(from, n);
	for (let i = from; i < n; i += 1) if (shown(source, i)) return i;
	return n;
}

const NO_HITS = new Int32Array(0);

/**
 * The list indexes of the threads T3's search found (ascending); a thread not in this list (an
 * archived one when listing active threads, or one gone since) is left out.
 */
export function hitIndexes(
	entry: FleetMachine,
	list: Listing,
	matches: Map<string, MessageMatch>,
): Int32Array {
	// A kept search answer is the same map until the machine's shell changes, which also
	// changes the listing: paging through a query finds its threads once per machine.
	if (list.hits?.matches === matches) return list.hits.at;
	const found: number[] = [];
	for (const id of matches.keys()) {
		const shell = entry.machine.thread(id);
		let i = shell ? firstAfter(list, shell.updatedAt ?? "", shell.id) - 1 : -1;
		if (i < 0 || listId(list, i) !== id) i = indexOfId(list, id);
		if (i >= 0) found.push(i);
	}
	const at = Int32Array.from(found.sort((a, b) => a - b));
	list.hits = { matches, at };
	return at;
}

/** How many queries' matches a listing keeps (paging through a few searches at once). */
const KEPT_QUERIES = 8;

/**
 * Indexes (ascending) of the listing's threads whose search text holds `query`, found once per
 * listing and query: the first page of a search and every next page read them from here.
 */
function textMatches(list: Listing, query: string): Int32Array {
	const kept = list.textMatches.get(query);
	if (kept) return kept;
	const haystack = search(list);
	const found: number[] = [];
	const n = haystack.starts.length;
	if (query.includes(SEPARATOR)) {
		for (let i = 0; i < n; i += 1)
			if (haystackText(haystack, i).includes(query)) found.push(i);
	} else {
		let at = haystack.text.indexOf(query);
		while (at >= 0) {
			const i = lastAtOrBefore(haystack.starts, at);
			found.push(i);
			if (i + 1 >= n) break;
			at = haystack.text.indexOf(query, haystack.starts[i + 1] as number);
		}
	}
	const matches = Int32Array.from(found);
	if (list.textMatches.size >= KEPT_QUERIES)
		list.textMatches.delete(list.textMatches.keys().next().value as string);
	list.textMatches.set(query, matches);
	return matches;
}

/** The first position in `sorted` whose value is at least `value`. */
function firstAtOrAfter(sorted: Int32Array, value: number): number {
	let lo = 0;
	let hi = sorted.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if ((sorted[mid] as number) < value) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

/** The last index whose start is at or before `offset` (the thread whose text holds it). */
function lastAtOrBefore(starts: Int32Array, offset: number): number {
	let lo = 0;
	let hi = starts.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if ((starts[mid] as number) <= offset) lo = mid + 1;
		else hi = mid;
	}
	return lo - 1;
}
