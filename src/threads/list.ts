/**
 * `t3_threads`: every thread of the allowlisted projects on every machine (or one machine /
 * project), newest first, from the shells the machines already hold (active threads cost no T3
 * round trip; archived ones come from `getArchivedShellSnapshot`). Keyset paging: the opaque
 * cursor carries the last row's sort key and a fingerprint of the filters it was made for.
 */
import type { FleetMachine } from "../fleet/fleet.ts";
import type { Machine } from "../t3/machine-api.ts";
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
function firstAfter(threads: ThreadShell[], at: string, id: string): number {
	let lo = 0;
	let hi = threads.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (afterCursor(threads[mid] as ThreadShell, at, id)) hi = mid;
		else lo = mid + 1;
	}
	return lo;
}

/** Title and latest message, lower-cased: what `query` is matched against. */
const searchText = (thread: ThreadShell): string =>
	`${thread.title}\n${thread.latestVisibleMessage?.text ?? ""}`.toLowerCase();

/** One machine's threads in list order, with their search texts (made on first search). */
interface Listing {
	threads: ThreadShell[];
	texts(): string[];
}

function listing(threads: ThreadShell[]): Listing {
	threads.sort(compareThreads);
	let texts: string[] | undefined;
	return {
		threads,
		texts: () => {
			texts ??= threads.map(searchText);
			return texts;
		},
	};
}

const sorted = new WeakMap<Machine, { dirty: boolean; listing: Listing }>();

/**
 * A machine's active threads in list order, re-sorted (and their search texts remade) only
 * after its shell changed: a listing then reads at most a page per machine, and a search over
 * 10 000 threads lower-cases none of them again.
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

/** Whether the thread sorts strictly after the cursor position (updatedAt desc, id asc). */
function afterCursor(thread: ThreadShell, at: string, id: string): boolean {
	const t = thread.updatedAt ?? "";
	if (t !== at) return t < at;
	return thread.id > id;
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
	const connecting = all.filter(
		(e) => e.machine.status().state === "connecting",
	);
	if (connecting.length)
		await Promise.all(
			connecting.map((e) => e.machine.ready(CONNECT_WAIT_MS).catch(() => {})),
		);
	const online: FleetMachine[] = [];
	const unavailable: {
		machine: string;
		state: string;
		reason: string | null;
	}[] = [];
	for (const entry of all) {
		const status = entry.machine.status();
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

	const page = createTopK(limit);
	let matched = 0;
	let projectSeen = filters.project === undefined;
	for (const entry of online) {
		const projects = projectsFor(deps, entry, filters.project);
		if (projects.size === 0) continue;
		projectSeen = true;
		const list = archived ? archived.get(entry) : sortedThreads(entry.machine);
		if (!list) continue;
		const { threads } = list;
		const texts = query === undefined ? undefined : list.texts();
		// Sorted: start after the cursor, stop once this machine cannot add to the page.
		let i = position ? firstAfter(threads, position.at, position.id) : 0;
		let taken = 0;
		for (; i < threads.length && taken <= limit; i += 1) {
			const thread = threads[i] as ThreadShell;
			const project = projects.get(thread.projectId);
			if (!project || thread.deletedAt) continue;
			if (state !== "all" && threadState(thread) !== state) continue;
			if (query !== undefined && !texts?.[i]?.includes(query)) continue;
			taken += 1;
			page.offer(entry, thread, project);
		}
		matched += taken;
	}
	if (!projectSeen) {
		throw new ThreadError(
			`project: no project "${filters.project}" (id, title or path) on any online machine this connector may use. Call t3_projects to list a machine's projects.`,
		);
	}
	const rows = page.rows();
	const more = matched > rows.length;
	const threads: ListedThread[] = rows.map(({ entry, thread, project }) => {
		// One indexed read per row shown: the store may track thousands of threads.
		const record = deps.threads.get(thread.id);
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

/**
 * The first `k` threads in sort order, kept while scanning (the scan may cover 10 000 threads;
 * most are rejected after one comparison with the current k-th, and none is copied).
 */
function createTopK(k: number) {
	const best: Candidate[] = [];
	return {
		offer(entry: FleetMachine, thread: ThreadShell, project: ProjectShell) {
			const worst = best[best.length - 1];
			if (
				best.length === k &&
				worst &&
				compareThreads(thread, worst.thread) >= 0
			)
				return;
			if (best.length === k) best.pop();
			let lo = 0;
			let hi = best.length;
			while (lo < hi) {
				const mid = (lo + hi) >> 1;
				if (compareThreads((best[mid] as Candidate).thread, thread) <= 0)
					lo = mid + 1;
				else hi = mid;
			}
			best.splice(lo, 0, { entry, thread, project });
		},
		rows: () => best,
	};
}
