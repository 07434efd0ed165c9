/**
 * Each machine's active threads in list order (newest first: `updatedAt`, then id), with what a
 * listing reads beside them: sort keys, states and, after the first search, lower-cased search
 * texts. Kept from the machine's shell changes and brought up to date on the next read: the
 * changed threads are sorted in among the others, which keep their order and everything made
 * for them, so a busy fleet costs a listing what changed, not a re-sort of every machine.
 */
import type { Machine } from "../../t3/machine-api.ts";
import type { ThreadShell } from "../../t3/model.ts";
import { type ThreadState, threadState } from "./thread-state.ts";

export function compareThreads(a: ThreadShell, b: ThreadShell): number {
	const at = a.updatedAt ?? "";
	const bt = b.updatedAt ?? "";
	if (at !== bt) return at < bt ? 1 : -1;
	return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * `updatedAt` as a number that sorts exactly as the text does, for the merge across machines
 * (comparing numbers, not texts, is most of a 500-machine page): only for the fixed-width form
 * T3 writes (`toISOString`, 24 characters), read digit by digit in mixed radix so no calendar
 * rule can reorder it; any other text gets NaN and is compared as text. Read by character
 * codes: a first listing keys every thread of the fleet, and cutting the text into numbers made
 * seven strings a thread (~24 MB of garbage for 100 000 threads, the largest part of the
 * process's peak).
 */
export function timeKey(time: string): number {
	if (
		time.length !== 24 ||
		time.charCodeAt(4) !== DASH ||
		time.charCodeAt(7) !== DASH ||
		time.charCodeAt(10) !== T ||
		time.charCodeAt(13) !== COLON ||
		time.charCodeAt(16) !== COLON ||
		time.charCodeAt(19) !== DOT ||
		time.charCodeAt(23) !== Z
	)
		return Number.NaN;
	// A tens digit past its radix would let a later field outweigh an earlier one.
	const month = digits(time, 5, 2, 1);
	const day = digits(time, 8, 2, 3);
	const hour = digits(time, 11, 2, 2);
	const minute = digits(time, 14, 2, 5);
	const second = digits(time, 17, 2, 5);
	return (
		(((((digits(time, 0, 4, 9) * 20 + month) * 40 + day) * 30 + hour) * 60 +
			minute) *
			60 +
			second) *
			1000 +
		digits(time, 20, 3, 9)
	);
}

const DASH = 45;
const T = 84;
const COLON = 58;
const DOT = 46;
const Z = 90;
const ZERO = 48;

/** The decimal number at `from` (`count` ASCII digits, the first at most `firstMax`), or NaN. */
function digits(
	text: string,
	from: number,
	count: number,
	firstMax: number,
): number {
	let n = 0;
	for (let i = from; i < from + count; i += 1) {
		const d = text.charCodeAt(i) - ZERO;
		if (!(d >= 0 && d <= (i === from ? firstMax : 9))) return Number.NaN;
		n = n * 10 + d;
	}
	return n;
}

/** Title and latest message, lower-cased: what `query` is matched against. */
const searchText = (thread: ThreadShell): string =>
	`${thread.title}\n${thread.latestVisibleMessage?.text ?? ""}`.toLowerCase();

/**
 * Between two threads' search texts in a machine's haystack. A query without it cannot match
 * across two threads, so one `indexOf` over the haystack finds the next matching thread.
 */
export const SEPARATOR = "\u0000";

/**
 * The search texts in list order, joined by SEPARATOR; `starts[i]` is where thread i's begins.
 * Only the joined copy is kept (not each text too): a latest message is up to 500 characters,
 * and with 100 000 threads two copies were 100 MB more after the first search.
 */
export interface Haystack {
	text: string;
	starts: Int32Array;
}

/** Thread `i`'s search text, out of the haystack. */
export function haystackText(haystack: Haystack, i: number): string {
	const end = haystack.starts[i + 1] ?? haystack.text.length + SEPARATOR.length;
	return haystack.text.slice(haystack.starts[i], end - SEPARATOR.length);
}

/**
 * A machine's threads in list order, with parallel arrays of what a listing reads. Changed in
 * place by `applyChanges` (a listing is read synchronously, so no reader sees it mid-change).
 * Times and ids are read from the threads themselves (`listTime`): the keys decide nearly every
 * comparison, and two more arrays were 1.6 MB for 100 000 threads.
 */
export interface Listing {
	threads: ThreadShell[];
	/** `timeKey` of each `updatedAt` (NaN when it is not in T3's fixed-width form). */
	keys: number[];
	states: ThreadState[];
	/** Indexes of the threads in each state, ascending (made on first use). */
	inState: Map<ThreadState, Int32Array>;
	/** The search texts joined (made on first use after a change). */
	haystack: Haystack | undefined;
	/** Indexes of the active threads waiting on a client tool call (made on first use). */
	toolCallWaiters: number[] | undefined;
	/**
	 * Whether every thread is in one project map and none deleted, for the last map asked
	 * about: then a listing need not look at its threads to know they may all be shown.
	 */
	allShown: { projects: Map<string, unknown>; all: boolean } | undefined;
	/** Per query, the threads whose search text holds it (list-filter.ts, made on first use). */
	textMatches: Map<string, Int32Array>;
	/** Where the threads of the last message-search answer asked about are (list-filter.ts). */
	hits: { matches: Map<string, unknown>; at: Int32Array } | undefined;
}

/** Thread `i`'s `updatedAt` ("" when absent): with its id, its position in list order. */
export const listTime = (list: Listing, i: number): string =>
	(list.threads[i] as ThreadShell).updatedAt ?? "";

/** Thread `i`'s id. */
export const listId = (list: Listing, i: number): string =>
	(list.threads[i] as ThreadShell).id;

/** Where the thread with this id is in the listing, or -1. */
export function indexOfId(list: Listing, id: string): number {
	const { threads } = list;
	for (let i = 0; i < threads.length; i += 1)
		if ((threads[i] as ThreadShell).id === id) return i;
	return -1;
}

/** Forgets what was made from the listing's order or states, after they changed. */
export function clearDerived(list: Listing): void {
	list.inState.clear();
	list.toolCallWaiters = undefined;
	list.allShown = undefined;
	list.hits = undefined;
	list.textMatches.clear();
}

/** Whether every thread of the listing has a project in `projects` and none is deleted. */
export function allShown(
	list: Listing,
	projects: Map<string, unknown>,
): boolean {
	const kept = list.allShown;
	if (kept?.projects === projects) return kept.all;
	let all = true;
	for (const thread of list.threads)
		if (!projects.has(thread.projectId) || thread.deletedAt) {
			all = false;
			break;
		}
	list.allShown = { projects, all };
	return all;
}

/** Indexes of the threads in this state, ascending. */
export function inState(list: Listing, state: ThreadState): Int32Array {
	let only = list.inState.get(state);
	if (!only) {
		const { states } = list;
		let count = 0;
		for (let i = 0; i < states.length; i += 1)
			if (states[i] === state) count += 1;
		only = new Int32Array(count);
		for (let i = 0, k = 0; i < states.length; i += 1)
			if (states[i] === state) only[k++] = i;
		list.inState.set(state, only);
	}
	return only;
}

/**
 * The listing's search texts and their haystack. Joined first and lower-cased once: a text
 * per thread (and its lower-cased copy) was ~12 MB of garbage for a first `query` over 100 000
 * threads. Lower-casing keeps every length but one letter's (U+0130, "İ", which grows): where
 * the joined text changed length, each text is lower-cased on its own so the starts hold.
 */
export function search(list: Listing): Haystack {
	if (list.haystack) return list.haystack;
	const { threads } = list;
	const starts = new Int32Array(threads.length);
	const parts: string[] = [];
	let at = 0;
	for (let i = 0; i < threads.length; i += 1) {
		const thread = threads[i] as ThreadShell;
		const message = thread.latestVisibleMessage?.text ?? "";
		starts[i] = at;
		at += thread.title.length + 1 + message.length + SEPARATOR.length;
		parts.push(thread.title, "\n", message, SEPARATOR);
	}
	parts.pop();
	const joined = parts.join("");
	const lowered = joined.toLowerCase();
	list.haystack =
		lowered.length === joined.length
			? { text: lowered, starts }
			: searchEach(threads);
	return list.haystack;
}

/** The haystack with each text lower-cased on its own. */
function searchEach(threads: ThreadShell[]): Haystack {
	const texts = threads.map(searchText);
	const starts = new Int32Array(texts.length);
	let at = 0;
	for (let i = 0; i < texts.length; i += 1) {
		starts[i] = at;
		at += (texts[i] as string).length + SEPARATOR.length;
	}
	return { text: texts.join(SEPARATOR), starts };
}

/** A listing of these threads (sorted in place). */
export function buildListing(threads: ThreadShell[]): Listing {
	threads.sort(compareThreads);
	return {
		threads,
		keys: threads.map((t) => timeKey(t.updatedAt ?? "")),
		states: threads.map(threadState),
		inState: new Map(),
		haystack: undefined,
		toolCallWaiters: undefined,
		allShown: undefined,
		hits: undefined,
		textMatches: new Map(),
	};
}

/**
 * Index of the first thread sorting strictly after position (`at`, `id`) in list order
 * (updatedAt desc, then id asc): where a thread with that key goes, and where a cursor resumes.
 */
export function firstAfter(
	list: Listing,
	at: string,
	id: string,
	atKey: number = timeKey(at),
): number {
	const { keys } = list;
	let lo = 0;
	let hi = keys.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		const key = keys[mid] as number;
		// The keys decide when both are numbers and differ (NaN compares false): else the texts.
		let after: boolean;
		if (key < atKey) after = true;
		else if (key > atKey) after = false;
		else {
			const t = listTime(list, mid);
			after = t !== at ? t < at : listId(list, mid) > id;
		}
		if (after) hi = mid;
		else lo = mid + 1;
	}
	return lo;
}

/**
 * Brings the listing up to date after the threads in `changed` changed: each leaves its old
 * place and its current version (none when gone) goes where it sorts now; the other threads
 * keep everything made for them.
 */
export function applyChanges(
	list: Listing,
	changed: Iterable<string>,
	current: (id: string) => ThreadShell | undefined,
): void {
	const { threads, keys, states } = list;
	for (const id of changed) {
		const was = indexOfId(list, id);
		if (was >= 0) {
			threads.splice(was, 1);
			keys.splice(was, 1);
			states.splice(was, 1);
		}
		const thread = current(id);
		if (!thread) continue;
		const to = firstAfter(list, thread.updatedAt ?? "", thread.id);
		threads.splice(to, 0, thread);
		keys.splice(to, 0, timeKey(thread.updatedAt ?? ""));
		states.splice(to, 0, threadState(thread));
	}
	clearDerived(list);
	list.haystack = undefined;
}

interface Kept {
	listing: Listing | undefined;
	/** Ids of the threads changed (or gone) since the listing was made. */
	changed: Set<string>;
	/** Re-read the machine's whole list (first read, a snapshot, or too many changes). */
	full: boolean;
}

const kept = new WeakMap<Machine, Kept>();

/** Past this many changed threads (and an eighth of the list), re-reading everything is cheaper. */
const FEW_CHANGES = 64;

const tooMany = (k: Kept) =>
	k.changed.size > FEW_CHANGES &&
	k.changed.size > (k.listing?.threads.length ?? 0) / 8;

/** A machine's active threads in list order, up to date with its shell. */
export function machineListing(machine: Machine): Listing {
	let k = kept.get(machine);
	if (!k) {
		const fresh: Kept = { listing: undefined, changed: new Set(), full: true };
		machine.onChange((change) => {
			if (fresh.full) return;
			switch (change.kind) {
				case "state":
				case "synchronized":
				case "config":
					return;
				case "thread":
				case "thread.removed":
					fresh.changed.add(
						change.kind === "thread" ? change.thread.id : change.threadId,
					);
					if (!tooMany(fresh)) return;
					break;
				default:
					break;
			}
			fresh.full = true;
			fresh.changed.clear();
		});
		kept.set(machine, fresh);
		k = fresh;
	}
	if (k.full || !k.listing) {
		k.listing = buildListing(machine.threads());
		k.full = false;
		k.changed.clear();
	} else if (k.changed.size > 0) {
		applyChanges(k.listing, k.changed, (id) => machine.thread(id));
		k.changed.clear();
	}
	return k.listing;
}
