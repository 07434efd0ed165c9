/**
 * `t3_threads`: every thread of the allowlisted projects on every machine (or one machine /
 * project), newest first, from the shells the machines already hold (active threads cost no T3
 * round trip; archived ones come from `getArchivedShellSnapshot`). Keyset paging: the opaque
 * cursor carries the last row's sort key and a fingerprint of the filters it was made for.
 */
import type { FleetMachine } from "../fleet/fleet.ts";
import type { Machine, MachineStatus } from "../t3/machine-api.ts";
import {
	BUSY_RUN_STATUSES,
	type ProjectShell,
	type ThreadShell,
} from "../t3/model.ts";
import { redact } from "../util/redact.ts";
import type { ThreadDeps } from "./deps.ts";
import { ThreadError } from "./errors.ts";
import { requireOnline, resolveMachine, resolveProject } from "./resolve.ts";
import { type ProjectRef, projectRef } from "./shapes.ts";

export type ThreadState = "attention" | "active" | "settled";
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

export interface ListedThread {
	thread_id: string;
	machine: string;
	project: ProjectRef;
	title: string;
	status: string;
	state: ThreadState;
	pending: "question" | "approval" | null;
	latest_run: { id: string; ordinal: number | null; status: string } | null;
	updated_at: string | null;
	archived: boolean;
	watched: boolean;
	origin: string | null;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
const CONNECT_WAIT_MS = 5_000;

/** `pendingRuntimeRequest.kind` → the contract's `pending` (PROTOCOL.md §7.4). */
function pendingOf(thread: ThreadShell): "question" | "approval" | null {
	const kind = thread.pendingRuntimeRequest?.kind;
	if (!kind || kind === "auth_refresh") return null;
	return kind === "user_input" ? "question" : "approval";
}

/** Exactly one state per thread, in CONTRACT.md's order of precedence. */
export function threadState(thread: ThreadShell): ThreadState {
	if (pendingOf(thread) !== null || thread.status === "failed")
		return "attention";
	if (thread.activeRunId !== null || BUSY_RUN_STATUSES.has(thread.status))
		return "active";
	return "settled";
}

/** The ordinal T3 writes into run ids (rows.ts); shown only as a convenience, null when absent. */
function ordinalOf(runId: string): number | null {
	const match = /:ordinal:(\d+)$/.exec(runId);
	return match ? Number(match[1]) : null;
}

interface Candidate {
	entry: FleetMachine;
	thread: ThreadShell;
	project: ProjectShell;
}

function compareThreads(a: ThreadShell, b: ThreadShell): number {
	const at = a.updatedAt ?? "";
	const bt = b.updatedAt ?? "";
	if (at !== bt) return at < bt ? 1 : -1;
	return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Index of the first thread sorting strictly after the cursor position (binary search). */
function firstAfter(list: Listing, at: string, id: string): number {
	const { times, ids } = list.keys();
	let lo = 0;
	let hi = times.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		const t = times[mid] as string;
		// Strictly after (updatedAt desc, id asc).
		if (t !== at ? t < at : (ids[mid] as string) > id) hi = mid;
		else lo = mid + 1;
	}
	return lo;
}

/** Title and latest message, lower-cased: what `query` is matched against. */
const searchText = (thread: ThreadShell): string =>
	`${thread.title}\n${thread.latestVisibleMessage?.text ?? ""}`.toLowerCase();

/**
 * Between two threads' search texts in a machine's haystack. A query without it cannot match
 * across two threads, so one `indexOf` over the haystack finds the next matching thread.
 */
const SEPARATOR = "\u0000";

/** One machine's search texts, in list order, joined by SEPARATOR; `starts[i]` is where thread i's begins. */
interface Haystack {
	texts: string[];
	text: string;
	starts: Int32Array;
}

function haystack(threads: ThreadShell[]): Haystack {
	const texts = threads.map(searchText);
	const starts = new Int32Array(texts.length);
	let at = 0;
	texts.forEach((t, i) => {
		starts[i] = at;
		at += t.length + SEPARATOR.length;
	});
	return { texts, text: texts.join(SEPARATOR), starts };
}

/** One machine's threads in list order, with their states and search texts (made on first use). */
interface Listing {
	threads: ThreadShell[];
	/** Sort keys as plain arrays: a cursor's position is a binary search over 50 machines. */
	keys(): { times: string[]; ids: string[] };
	states(): ThreadState[];
	search(): Haystack;
}

function listing(threads: ThreadShell[]): Listing {
	threads.sort(compareThreads);
	let keys: { times: string[]; ids: string[] } | undefined;
	let states: ThreadState[] | undefined;
	let search: Haystack | undefined;
	return {
		threads,
		keys: () => {
			keys ??= {
				times: threads.map((t) => t.updatedAt ?? ""),
				ids: threads.map((t) => t.id),
			};
			return keys;
		},
		states: () => {
			states ??= threads.map(threadState);
			return states;
		},
		search: () => {
			search ??= haystack(threads);
			return search;
		},
	};
}

const sorted = new WeakMap<Machine, { dirty: boolean; listing: Listing }>();

/**
 * A machine's active threads in list order, re-sorted (and their states and search texts
 * remade) only after its shell changed: a listing then reads about a page of threads in all,
 * and a search over 10 000 threads lower-cases none of them again.
 */
function sortedThreads(machine: Machine): Listing {
	let cache = sorted.get(machine);
	if (!cache) {
		const fresh = { dirty: true, listing: listing([]) };
		machine.onChange((change) => {
			if (change.kind !== "state" && change.kind !== "synchronized")
				fresh.dirty = true;
		});
		sorted.set(machine, fresh);
		cache = fresh;
	}
	if (cache.dirty) {
		cache.dirty = false;
		cache.listing = listing(machine.threads());
	}
	return cache.listing;
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
}

/** Index of the first thread at or after `from` on this machine that passes every filter. */
function nextMatch(source: Source, from: number, filter: RowFilter): number {
	const { threads } = source.list;
	const n = threads.length;
	const states = filter.state === "all" ? undefined : source.list.states();
	const query = filter.query;
	const search = query === undefined ? undefined : source.list.search();
	const scan = search !== undefined && query?.includes(SEPARATOR);
	let i = from;
	while (i < n) {
		if (search !== undefined && query !== undefined) {
			if (scan) {
				while (i < n && !search.texts[i]?.includes(query)) i += 1;
			} else {
				const at = search.text.indexOf(query, search.starts[i]);
				i = at < 0 ? n : lastAtOrBefore(search.starts, at);
			}
			if (i >= n) break;
		}
		const thread = threads[i] as ThreadShell;
		if (
			source.projects.has(thread.projectId) &&
			!thread.deletedAt &&
			(states === undefined || states[i] === filter.state)
		)
			return i;
		i += 1;
	}
	return n;
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

function encodeCursor(filters: ListFilters, last: Candidate): string {
	const body = JSON.stringify({
		f: fingerprint(filters),
		u: last.thread.updatedAt ?? "",
		t: last.thread.id,
	});
	return Buffer.from(body).toString("base64url");
}

function decodeCursor(
	filters: ListFilters,
	cursor: string,
): { at: string; id: string } {
	let parsed: { f?: unknown; u?: unknown; t?: unknown };
	try {
		parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
	} catch {
		throw new ThreadError(
			"cursor: not a cursor t3_threads returned. Pass the next_cursor of the previous t3_threads result unchanged, or omit cursor for the first page.",
		);
	}
	if (
		typeof parsed?.f !== "string" ||
		typeof parsed.u !== "string" ||
		typeof parsed.t !== "string"
	) {
		throw new ThreadError(
			"cursor: not a cursor t3_threads returned. Pass the next_cursor of the previous t3_threads result unchanged, or omit cursor for the first page.",
		);
	}
	if (parsed.f !== fingerprint(filters)) {
		throw new ThreadError(
			"cursor: it belongs to a t3_threads call with other filters (machine, project, state, query, archived). Repeat that call's filters with this cursor, or omit cursor to start over with the new filters.",
		);
	}
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
		if (threads) out.set(entry, listing(threads));
		else
			unavailable.push({
				machine: entry.config.name,
				state: entry.machine.status().state,
				reason: `its archived threads could not be read: ${error instanceof Error ? redact(error.message) : "unknown error"}`,
			});
	}
	return out;
}

/** Allowlisted projects of a machine that match the `project` filter (id, title or path). */
function projectsFor(
	deps: ThreadDeps,
	entry: FleetMachine,
	ref: string | undefined,
): Map<string, ProjectShell> {
	const visible = deps.fleet.projects(entry);
	const chosen =
		ref === undefined
			? visible
			: visible.filter(
					(p) => p.id === ref || p.title === ref || p.workspaceRoot === ref,
				);
	return new Map(chosen.map((p) => [p.id, p]));
}

export async function listThreads(deps: ThreadDeps, filters: ListFilters) {
	const limit = filters.limit ?? DEFAULT_LIMIT;
	const state = filters.state ?? "all";
	const query = filters.query?.toLowerCase();
	const position =
		filters.cursor === undefined
			? undefined
			: decodeCursor(filters, filters.cursor);
	const { online, unavailable } = await pickMachines(deps, filters);
	if (filters.machine !== undefined && filters.project !== undefined)
		resolveProject(deps, online[0] as FleetMachine, filters.project);

	const archived = filters.archived
		? await readArchived(online, unavailable)
		: undefined;

	const filter: RowFilter = { state, query };
	const sources: Source[] = [];
	let projectSeen = filters.project === undefined;
	for (const entry of online) {
		const projects = projectsFor(deps, entry, filters.project);
		if (projects.size === 0) continue;
		projectSeen = true;
		const list = archived ? archived.get(entry) : sortedThreads(entry.machine);
		if (!list) continue;
		const source: Source = { entry, projects, list, index: 0 };
		const from = position ? firstAfter(list, position.at, position.id) : 0;
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
	const threads: ListedThread[] = rows.map(({ entry, thread, project }) => {
		const record = records.get(thread.id);
		return {
			thread_id: thread.id,
			machine: entry.config.name,
			project: projectRef(project),
			title: thread.title,
			status: thread.status,
			state: threadState(thread),
			pending: pendingOf(thread),
			latest_run: thread.latestRunId
				? {
						id: thread.latestRunId,
						ordinal: ordinalOf(thread.latestRunId),
						status: thread.status,
					}
				: null,
			updated_at: thread.updatedAt ?? null,
			archived: filters.archived === true || Boolean(thread.archivedAt),
			watched: record ? record.watched === 1 : false,
			origin: record?.origin ?? null,
		};
	});
	const last = rows.at(-1);
	return {
		threads,
		next_cursor: more && last ? encodeCursor(filters, last) : null,
		unavailable,
	};
}
