/**
 * `t3_threads`: every thread of the allowlisted projects on every machine (or one machine /
 * project), newest first, from the shells the machines already hold (active threads cost no T3
 * round trip; archived ones come from `getArchivedShellSnapshot`). Keyset paging: the opaque
 * cursor carries the last row's sort key and a fingerprint of the filters it was made for.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { RunFailure } from "../../t3/derive/run-failure.ts";
import type { MachineStatus } from "../../t3/machine-api.ts";
import type { ProjectShell, ThreadShell } from "../../t3/model.ts";
import { redact } from "../../util/redact.ts";
import type { ThreadDeps } from "../deps.ts";
import { placeShape } from "../dispatch/workspace.ts";
import { ThreadError } from "../errors.ts";
import { requireOnline, resolveMachine, resolveProject } from "../resolve.ts";
import { type ProjectRef, projectRef } from "../shapes.ts";
import { invalidCursor, openCursor, sealCursor } from "./cursor.ts";
import { listedFailures } from "./listed-failure.ts";
import { type MessageMatch, searchMessages } from "./message-search.ts";
import {
	applyKnownToolCalls,
	learnPendingToolCalls,
	listedState,
} from "./pending-resumability.ts";
import {
	buildListing,
	compareThreads,
	firstAfter,
	type Haystack,
	inState,
	type Listing,
	machineListing,
	SEPARATOR,
	search,
} from "./thread-index.ts";
import {
	backgroundTasks,
	type Pending,
	pendingOf,
	snoozedUntil,
	type ThreadState,
	threadState,
} from "./thread-state.ts";
import { vanishedListing } from "./vanished-listing.ts";

export { type ThreadState, threadState };
export const STATE_FILTERS = ["active", "attention", "settled", "all"] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

export interface ListFilters {
	machine?: string;
	project?: string;
	state?: StateFilter;
	query?: string;
	archived?: boolean;
	limit?: number;
	cursor?: string;
}

export interface ListedThread extends RunFailure {
	thread_id: string;
	machine: string;
	project: ProjectRef;
	title: string;
	status: string;
	state: ThreadState;
	pending: Pending | null;
	latest_run: { id: string; ordinal: number | null; status: string } | null;
	branch: string | null;
	worktree_path: string | null;
	snoozed_until: string | null;
	background_tasks: number;
	updated_at: string | null;
	archived: boolean;
	watched: boolean;
	origin: string | null;
	/** How T3's message search found it; null when found by title / latest message only. */
	match: MessageMatch | null;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
const CONNECT_WAIT_MS = 5_000;

/** The ordinal T3 writes into run ids (rows.ts); shown only as a convenience, null when absent. */
function ordinalOf(runId: string): number | null {
	const match = /:ordinal:(\d+)$/.exec(runId);
	return match ? Number(match[1]) : null;
}

interface Candidate {
	entry: FleetMachine;
	thread: ThreadShell;
	project: ProjectShell;
	match: MessageMatch | null;
}

/** The filters every row must pass, besides its machine's projects. */
interface RowFilter {
	state: StateFilter;
	/** Lower-cased. */
	query: string | undefined;
}

/**
 * One machine's matching threads, walked in list order: `index` is the current one
 * (`threads.length` once there are no more).
 */
interface Source {
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
function nextMatch(source: Source, from: number, filter: RowFilter): number {
	const { list } = source;
	const n = list.threads.length;
	if (filter.query !== undefined) {
		const haystack = search(list);
		const states = filter.state === "all" ? undefined : list.states;
		const hits = source.hits?.at ?? NO_HITS;
		let text = nextText(haystack, from, filter.query);
		let k = firstAtOrAfter(hits, from);
		for (;;) {
			const hit = k < hits.length ? (hits[k] as number) : n;
			const i = Math.min(text, hit);
			if (i >= n) return n;
			if (
				shown(source, i) &&
				(states === undefined || states[i] === filter.state)
			)
				return i;
			if (i === text) text = nextText(haystack, i + 1, filter.query);
			if (i === hit) k += 1;
		}
	}
	if (filter.state !== "all") {
		// Only the threads in that state: "what needs me?" skips the thousands settled.
		const only = inState(list, filter.state);
		for (let k = firstAtOrAfter(only, from); k < only.length; k += 1)
			if (shown(source, only[k] as number)) return only[k] as number;
		return n;
	}
	for (let i = from; i < n; i += 1) if (shown(source, i)) return i;
	return n;
}

const NO_HITS = new Int32Array(0);

/**
 * The list indexes of the threads T3's search found (ascending); a thread not in this list (an
 * archived one when listing active threads, or one gone since) is left out.
 */
function hitIndexes(
	entry: FleetMachine,
	list: Listing,
	matches: Map<string, MessageMatch>,
): Int32Array {
	const at: number[] = [];
	for (const id of matches.keys()) {
		const shell = entry.machine.thread(id);
		let i = shell ? firstAfter(list, shell.updatedAt ?? "", shell.id) - 1 : -1;
		if (list.ids[i] !== id) i = list.ids.indexOf(id);
		if (i >= 0) at.push(i);
	}
	return Int32Array.from(at.sort((a, b) => a - b));
}

/** Index of the first thread at or after `from` whose search text holds `query` (or the count). */
function nextText(search: Haystack, from: number, query: string): number {
	const n = search.texts.length;
	if (from >= n) return n;
	if (query.includes(SEPARATOR)) {
		let i = from;
		while (i < n && !search.texts[i]?.includes(query)) i += 1;
		return i;
	}
	const at = search.text.indexOf(query, search.starts[from]);
	return at < 0 ? n : lastAtOrBefore(search.starts, at);
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

const current = (s: Source) => s.list.threads[s.index] as ThreadShell;

/**
 * The first `count` matching threads across machines in list order: a k-way merge of the
 * machines' sorted lists (a binary heap of their current threads), so a page reads about
 * `count` threads plus one per machine, however many the machines hold.
 */
function merge(
	sources: Source[],
	filter: RowFilter,
	count: number,
): Candidate[] {
	const heap = sources.filter((s) => s.index < s.list.threads.length);
	const less = (a: number, b: number) =>
		compareThreads(current(heap[a] as Source), current(heap[b] as Source)) < 0;
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

function encodeCursor(
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

function decodeCursor(
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

/** The machines to read, and the ones reported under `unavailable` instead. */
async function pickMachines(deps: ThreadDeps, filters: ListFilters) {
	if (filters.machine !== undefined) {
		const entry = resolveMachine(deps, filters.machine);
		await requireOnline(entry);
		return { online: [entry], unavailable: [] };
	}
	const all = deps.fleet.list();
	let statuses = all.map((e) => e.machine.status());
	const connecting = all.filter((_, i) => statuses[i]?.state === "connecting");
	if (connecting.length) {
		await Promise.all(
			connecting.map((e) => e.machine.ready(CONNECT_WAIT_MS).catch(() => {})),
		);
		statuses = all.map((e) => e.machine.status());
	}
	const online: FleetMachine[] = [];
	const unavailable: {
		machine: string;
		state: string;
		reason: string | null;
	}[] = [];
	for (const [i, entry] of all.entries()) {
		const status = statuses[i] as MachineStatus;
		if (status.state === "online") online.push(entry);
		else
			unavailable.push({
				machine: entry.config.name,
				state: status.state,
				reason: status.reason,
			});
	}
	return { online, unavailable };
}

/**
 * Every online machine's archived threads (`getArchivedShellSnapshot`), read in parallel; a
 * machine whose read fails is listed under `unavailable` with why, not failing the whole list.
 */
async function readArchived(
	online: FleetMachine[],
	unavailable: { machine: string; state: string; reason: string | null }[],
): Promise<Map<FleetMachine, Listing>> {
	const read = await Promise.all(
		online.map((entry) =>
			entry.machine.archivedThreads().then(
				(threads) => ({ entry, threads, error: undefined }),
				(error: unknown) => ({ entry, threads: undefined, error }),
			),
		),
	);
	const out = new Map<FleetMachine, Listing>();
	for (const { entry, threads, error } of read) {
		if (threads) out.set(entry, buildListing(threads));
		else
			unavailable.push({
				machine: entry.config.name,
				state: entry.machine.status().state,
				reason: `its archived threads could not be read: ${error instanceof Error ? redact(error.message) : "unknown error"}`,
			});
	}
	return out;
}

/** Per machine, its allowlisted projects by id, remade only when its project objects change. */
const visibleById = new WeakMap<
	FleetMachine,
	{ from: ProjectShell[]; byId: Map<string, ProjectShell> }
>();

/** Allowlisted projects of a machine that match the `project` filter (id, title or path). */
function projectsFor(
	deps: ThreadDeps,
	entry: FleetMachine,
	ref: string | undefined,
): Map<string, ProjectShell> {
	const visible = deps.fleet.projects(entry);
	if (ref !== undefined)
		return new Map(
			visible
				.filter(
					(p) => p.id === ref || p.title === ref || p.workspaceRoot === ref,
				)
				.map((p) => [p.id, p]),
		);
	const memo = visibleById.get(entry);
	if (
		memo &&
		memo.from.length === visible.length &&
		memo.from.every((p, i) => p === visible[i])
	)
		return memo.byId;
	const byId = new Map(visible.map((p) => [p.id, p]));
	visibleById.set(entry, { from: visible, byId });
	return byId;
}

export async function listThreads(deps: ThreadDeps, filters: ListFilters) {
	const limit = filters.limit ?? DEFAULT_LIMIT;
	const state = filters.state ?? "all";
	const query = filters.query?.toLowerCase();
	const position =
		filters.cursor === undefined
			? undefined
			: decodeCursor(deps, filters, filters.cursor);
	const { online, unavailable } = await pickMachines(deps, filters);
	if (filters.machine !== undefined && filters.project !== undefined)
		resolveProject(deps, online[0] as FleetMachine, filters.project);

	const [archived, found] = await Promise.all([
		filters.archived ? readArchived(online, unavailable) : undefined,
		searchMessages(online, filters.query, unavailable, {
			now: deps.now,
			timeoutMs: deps.searchTimeoutMs,
		}),
	]);

	const filter: RowFilter = { state, query };
	const listingOf = (entry: FleetMachine) =>
		archived ? archived.get(entry) : machineListing(entry.machine);
	// Pending client tool calls not yet known to be resumable or not: read before any state is.
	await Promise.all(
		online.map((entry) => {
			const list = listingOf(entry);
			const projects = projectsFor(deps, entry, filters.project);
			return list && projects.size > 0
				? learnPendingToolCalls(entry.machine, list, (t) =>
						projects.has(t.projectId),
					)
				: undefined;
		}),
	);
	const sources: Source[] = [];
	let projectSeen = filters.project === undefined;
	for (const entry of online) {
		const projects = projectsFor(deps, entry, filters.project);
		if (projects.size === 0) continue;
		projectSeen = true;
		const list = listingOf(entry);
		if (!list) continue;
		applyKnownToolCalls(entry.machine, list);
		const source: Source = { entry, projects, list, index: 0 };
		const matches = found.get(entry);
		if (matches?.size)
			source.hits = { at: hitIndexes(entry, list, matches), matches };
		const from = position ? firstAfter(list, position.at, position.id) : 0;
		source.index = nextMatch(source, from, filter);
		sources.push(source);
	}
	// Tracked threads their machine lost: listed as missing, not left out.
	if (!archived)
		for (const entry of online) {
			const vanished = vanishedListing(deps, entry, filters.project);
			if (!vanished) continue;
			const source: Source = { entry, ...vanished, index: 0 };
			const from = position
				? firstAfter(vanished.list, position.at, position.id)
				: 0;
			source.index = nextMatch(source, from, filter);
			sources.push(source);
		}
	if (!projectSeen) {
		throw new ThreadError(
			`project: no project "${filters.project}" (id, title or path) on any online machine this connector may use. Call t3_projects to list a machine's projects.`,
		);
	}
	// One more than the page: whether there is a next page.
	const picked = merge(sources, filter, limit + 1);
	const more = picked.length > limit;
	const rows = more ? picked.slice(0, limit) : picked;
	// One read for the page's records: the store may track thousands of threads.
	const records = deps.threads.getMany(rows.map((r) => r.thread.id));
	const failures = await listedFailures(
		rows.map(({ entry, thread }) => ({ machine: entry.machine, thread })),
	);
	const threads: ListedThread[] = rows.map(
		({ entry, thread, project, match }, i) => {
			const record = records.get(thread.id);
			return {
				thread_id: thread.id,
				machine: entry.config.name,
				project: projectRef(project),
				title: thread.title,
				status: thread.status,
				state: listedState(entry.machine, thread),
				pending: pendingOf(thread),
				latest_run: thread.latestRunId
					? {
							id: thread.latestRunId,
							ordinal: ordinalOf(thread.latestRunId),
							status: thread.status,
						}
					: null,
				...(failures[i] as RunFailure),
				...placeShape(thread),
				snoozed_until: snoozedUntil(thread),
				background_tasks: backgroundTasks(thread),
				updated_at: thread.updatedAt ?? null,
				archived: filters.archived === true || Boolean(thread.archivedAt),
				watched: record ? record.watched === 1 : false,
				origin: record?.origin ?? null,
				match,
			};
		},
	);
	const last = rows.at(-1);
	return {
		threads,
		next_cursor: more && last ? encodeCursor(deps, filters, last) : null,
		unavailable,
	};
}
