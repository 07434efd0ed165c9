/**
 * `t3_threads`: every thread of the allowlisted projects on every machine (or one machine /
 * project), newest first, from the shells the machines already hold (active threads cost no T3
 * round trip; archived ones come from `getArchivedShellSnapshot`). Keyset paging: the opaque
 * cursor carries the last row's sort key and a fingerprint of the filters it was made for.
 * This is the entry: it reads the machines (list-machines.ts), walks their listings through the
 * filters (list-filter.ts), merges one page (list-page.ts) and shapes its rows (list-row.ts).
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { ProjectShell } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { heldRows } from "../held-view.ts";
import { resolveProject } from "../resolve.ts";
import {
	hitIndexes,
	nextMatch,
	type RowFilter,
	type Source,
} from "./list-filter.ts";
import { pickMachines, projectsFor, readArchived } from "./list-machines.ts";
import { decodeCursor, encodeCursor, merge } from "./list-page.ts";
import {
	keepPlan,
	keptPlan,
	type PlannedMachine,
	planVersion,
} from "./list-plan.ts";
import { listedRows } from "./list-row.ts";
import { SEARCH_MAX, SEARCH_MIN, searchMessages } from "./message-search.ts";
import {
	applyKnownToolCalls,
	hasToolCallWaiters,
	learnPendingToolCalls,
} from "./pending-resumability.ts";
import {
	firstAfter,
	type Listing,
	machineListing,
	timeKey,
} from "./thread-index.ts";
import { type ThreadState, threadState } from "./thread-state.ts";
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

export type { ListedThread } from "./list-row.ts";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/**
 * `query` as T3's search takes it (CONTRACT.md "Faithful edges"): trimmed first, then 2–200
 * characters, so a query T3 would refuse is refused here, naming the argument.
 */
function checkedQuery(filters: ListFilters): ListFilters {
	if (filters.query === undefined) return filters;
	const query = filters.query.trim();
	if (query.length < SEARCH_MIN || query.length > SEARCH_MAX)
		throw new ThreadError(
			`query: ${JSON.stringify(filters.query.slice(0, 40))} is ${query.length} characters after trimming; expected ${SEARCH_MIN}–${SEARCH_MAX} (T3's message search trims and checks the same way).`,
		);
	return { ...filters, query };
}

export async function listThreads(deps: ThreadDeps, given: ListFilters) {
	const filters = checkedQuery(given);
	const limit = filters.limit ?? DEFAULT_LIMIT;
	const state = filters.state ?? "all";
	const query = filters.query?.toLowerCase();
	const position =
		filters.cursor === undefined
			? undefined
			: decodeCursor(deps, filters, filters.cursor);
	const atKey = position ? timeKey(position.at) : Number.NaN;
	// A plain listing (every machine and project, active threads) reuses the last call's plan
	// while nothing changed on any machine (list-plan.ts).
	const plain =
		filters.machine === undefined &&
		filters.project === undefined &&
		filters.archived !== true;
	const version = plain ? planVersion(deps.fleet) : undefined;
	const kept =
		version === undefined ? undefined : keptPlan(deps.fleet, version);
	const reach = kept ?? (await pickMachines(deps, filters));
	const { online } = reach;
	// The call's own: search and archive reads add the machines they could not read.
	const unavailable = [...reach.unavailable];
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
	// Each machine's listing and visible projects, found once: with 500 machines, what a call
	// does per machine (not per thread) is most of its cost.
	const readable: {
		entry: FleetMachine;
		list: Listing | undefined;
		projects: Map<string, ProjectShell>;
		waiting?: boolean;
	}[] = kept ? kept.machines : [];
	if (!kept)
		for (const entry of online)
			readable.push({
				entry,
				list: archived ? archived.get(entry) : machineListing(entry.machine),
				projects: projectsFor(deps, entry, filters.project),
			});
	// Pending client tool calls not yet known to be resumable or not: read before any state is.
	const learning: Promise<unknown>[] = [];
	for (const { entry, list, projects, waiting } of readable) {
		if (waiting === false) continue;
		const learn =
			list && projects.size > 0
				? learnPendingToolCalls(entry.machine, list, (t) =>
						projects.has(t.projectId),
					)
				: undefined;
		if (learn) learning.push(learn);
	}
	if (learning.length > 0) await Promise.all(learning);
	const sources: Source[] = [];
	const planned: PlannedMachine[] = [];
	let projectSeen = filters.project === undefined;
	for (const { entry, list, projects, waiting } of readable) {
		if (projects.size === 0) continue;
		projectSeen = true;
		if (!list) continue;
		if (waiting !== false) applyKnownToolCalls(entry.machine, list);
		if (version !== undefined && !kept)
			planned.push({
				entry,
				list,
				projects,
				waiting: hasToolCallWaiters(list),
			});
		const source: Source = { entry, projects, list, index: 0 };
		const matches = found.get(entry);
		if (matches?.size)
			source.hits = { at: hitIndexes(entry, list, matches), matches };
		const from = position
			? firstAfter(list, position.at, position.id, atKey)
			: 0;
		source.index = nextMatch(source, from, filter);
		sources.push(source);
	}
	if (version !== undefined && !kept)
		keepPlan(deps.fleet, version, {
			online,
			unavailable: reach.unavailable,
			machines: planned,
		});
	// Tracked threads their machine lost: listed as missing, not left out.
	if (!archived) {
		const withMissing = deps.threads.machinesWithMissing();
		for (const entry of online) {
			if (!withMissing.has(entry.config.name)) continue;
			const vanished = vanishedListing(deps, entry, filters.project);
			if (!vanished) continue;
			const source: Source = { entry, ...vanished, index: 0 };
			const from = position
				? firstAfter(vanished.list, position.at, position.id)
				: 0;
			source.index = nextMatch(source, from, filter);
			sources.push(source);
		}
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
	const threads = await listedRows(deps, rows, filters.archived === true);
	const last = rows.at(-1);
	return {
		threads,
		next_cursor: more && last ? encodeCursor(deps, filters, last) : null,
		unavailable,
	};
}

/** `t3_threads`' states: the listing's, and `held` (dispatches held, not started yet). */
export const LIST_STATES = [
	"active",
	"attention",
	"settled",
	"held",
	"all",
] as const;

/**
 * `t3_threads` (CONTRACT.md "One pool"): `state: "held"` lists the caller's held dispatches
 * (from the server's own rows: they have no machine yet); the first page of `all` lists them
 * first, then the threads; the other states never list them.
 */
export async function listWithHeld(
	deps: ThreadDeps,
	given: Omit<ListFilters, "state"> & {
		state?: (typeof LIST_STATES)[number];
	},
) {
	if (given.state === "held") {
		const filters = checkedQuery(given as ListFilters);
		const rows = filters.archived ? [] : heldRows(deps, filters);
		return {
			threads: rows.slice(0, filters.limit ?? DEFAULT_LIMIT),
			next_cursor: null,
			unavailable: [],
		};
	}
	const filters = given as ListFilters;
	const listed = await listThreads(deps, filters);
	const first =
		(filters.state ?? "all") === "all" &&
		filters.cursor === undefined &&
		!filters.archived;
	const held = first ? heldRows(deps, checkedQuery(filters)) : [];
	return held.length === 0
		? listed
		: { ...listed, threads: [...held, ...listed.threads] };
}
