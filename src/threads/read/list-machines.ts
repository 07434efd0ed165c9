/**
 * What `t3_threads` reads on each machine: which machines (online ones; the rest are reported
 * under `unavailable`), their archived threads when asked, and their allowlisted projects that
 * match the `project` filter.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { ProjectShell } from "../../t3/model.ts";
import { redact } from "../../util/redact.ts";
import type { ThreadDeps } from "../deps.ts";
import { requireOnline, resolveMachine } from "../resolve.ts";
import type { ListFilters } from "./list.ts";
import type { Unavailable } from "./message-search.ts";
import { buildListing, type Listing } from "./thread-index.ts";

const CONNECT_WAIT_MS = 5_000;

/** The machines to read, and the ones reported under `unavailable` instead. */
export async function pickMachines(deps: ThreadDeps, filters: ListFilters) {
	if (filters.machine !== undefined) {
		const entry = resolveMachine(deps, filters.machine);
		await requireOnline(entry);
		return { online: [entry], unavailable: [] };
	}
	const all = deps.fleet.list();
	let sorted = sortByState(all);
	// Rarely any: then each is waited for (a bounded time) and every machine read again.
	if (sorted.connecting.length > 0) {
		await Promise.all(
			sorted.connecting.map((m) => m.ready(CONNECT_WAIT_MS).catch(() => {})),
		);
		sorted = sortByState(all);
	}
	return { online: sorted.online, unavailable: sorted.unavailable };
}

/**
 * One pass, each machine's status read once: with 500 machines, what a listing does per
 * machine is most of its cost.
 */
function sortByState(all: FleetMachine[]) {
	const online: FleetMachine[] = [];
	const connecting: FleetMachine["machine"][] = [];
	const unavailable: Unavailable[] = [];
	for (let i = 0; i < all.length; i++) {
		const entry = all[i] as FleetMachine;
		const status = entry.machine.status();
		if (status.state === "online") online.push(entry);
		else {
			if (status.state === "connecting") connecting.push(entry.machine);
			unavailable.push({
				machine: entry.config.name,
				state: status.state,
				reason: status.reason,
			});
		}
	}
	return { online, connecting, unavailable };
}

/**
 * Every online machine's archived threads (`getArchivedShellSnapshot`), read in parallel; a
 * machine whose read fails is listed under `unavailable` with why, not failing the whole list.
 */
export async function readArchived(
	online: FleetMachine[],
	unavailable: Unavailable[],
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
export function projectsFor(
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
	// The fleet hands out one array per project list (fleet.ts): the same array, the same map.
	const memo = visibleById.get(entry);
	if (memo?.from === visible) return memo.byId;
	const byId = new Map(visible.map((p) => [p.id, p]));
	visibleById.set(entry, { from: visible, byId });
	return byId;
}
