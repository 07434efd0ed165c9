/**
 * `t3_threads`: every thread of the allowlisted projects on every machine (or one machine /
 * project), newest first, from the shells the machines already hold (active threads cost no T3
 * round trip; archived ones come from `getArchivedShellSnapshot`). Keyset paging: the opaque
 * cursor carries the last row's sort key and a fingerprint of the filters it was made for.
 */
import type { FleetMachine } from "../fleet/fleet.ts";
import {
	BUSY_RUN_STATUSES,
	type ProjectShell,
	type ThreadShell,
} from "../t3/model.ts";
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

function compareCandidates(a: Candidate, b: Candidate): number {
	const at = a.thread.updatedAt ?? "";
	const bt = b.thread.updatedAt ?? "";
	if (at !== bt) return at < bt ? 1 : -1;
	return a.thread.id < b.thread.id ? -1 : a.thread.id > b.thread.id ? 1 : 0;
}

/** Whether `c` sorts strictly after the cursor position (updatedAt desc, id asc). */
function afterCursor(c: Candidate, at: string, id: string): boolean {
	const t = c.thread.updatedAt ?? "";
	if (t !== at) return t < at;
	return c.thread.id > id;
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

	const candidates: Candidate[] = [];
	let projectSeen = filters.project === undefined;
	for (const entry of online) {
		const projects = projectsFor(deps, entry, filters.project);
		if (projects.size === 0) continue;
		projectSeen = true;
		const threads = filters.archived
			? await entry.machine.archivedThreads()
			: entry.machine.threads();
		for (const thread of threads) {
			const project = projects.get(thread.projectId);
			if (!project || thread.deletedAt) continue;
			if (state !== "all" && threadState(thread) !== state) continue;
			if (
				query !== undefined &&
				!thread.title.toLowerCase().includes(query) &&
				!(thread.latestVisibleMessage?.text ?? "").toLowerCase().includes(query)
			)
				continue;
			const candidate = { entry, thread, project };
			if (position && !afterCursor(candidate, position.at, position.id))
				continue;
			candidates.push(candidate);
		}
	}
	if (!projectSeen) {
		throw new ThreadError(
			`project: no project "${filters.project}" (id, title or path) on any online machine this connector may use. Call t3_projects to list a machine's projects.`,
		);
	}
	const page = topK(candidates, limit);
	const more = candidates.length > page.length;
	const records = new Map(deps.threads.all().map((r) => [r.thread_id, r]));
	const threads: ListedThread[] = page.map(({ entry, thread, project }) => {
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
	const last = page.at(-1);
	return {
		threads,
		next_cursor: more && last ? encodeCursor(filters, last) : null,
		unavailable,
	};
}

/** The first `k` in sort order without sorting everything (k is small, the list may be 10 000). */
function topK(items: Candidate[], k: number): Candidate[] {
	if (items.length <= k * 4) return items.sort(compareCandidates).slice(0, k);
	const best: Candidate[] = [];
	for (const item of items) {
		if (best.length === k) {
			if (compareCandidates(item, best[k - 1] as Candidate) >= 0) continue;
			best.pop();
		}
		// Insert in place (binary search): the page stays sorted.
		let lo = 0;
		let hi = best.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (compareCandidates(best[mid] as Candidate, item) <= 0) lo = mid + 1;
			else hi = mid;
		}
		best.splice(lo, 0, item);
	}
	return best;
}
