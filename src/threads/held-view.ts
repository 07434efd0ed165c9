/**
 * A held dispatch as the read tools show it (CONTRACT.md "One pool", "Holding"): `t3_thread`'s
 * answer and a `t3_threads` row for a thread that has not started (held, or withdrawn / never
 * started): no machine (for a pattern), the project as given, no runs, and `held`.
 */
import type { HeldHead } from "../store/held-store.ts";
import { NO_FAILURE } from "../t3/derive/run-failure.ts";
import type { ThreadDeps } from "./deps.ts";
import { appUrl } from "./shapes.ts";

/** The fields a held dispatch shares in both tools. */
function common(deps: ThreadDeps, head: HeldHead) {
	const holding = deps.holding;
	const open = holding?.isOpen(head.thread_id) ?? false;
	const stored = JSON.parse(holding?.args(head.thread_id) ?? "{}") as {
		watch?: boolean;
	};
	return {
		thread_id: head.thread_id,
		machine: head.named ? head.machine : null,
		project: { id: null, title: head.project, path: null },
		title: head.title,
		status: head.status === "starting" ? "held" : head.status,
		branch: null,
		worktree_path: null,
		snoozed_until: null,
		pinned: false,
		background_tasks: 0,
		watched: stored.watch ?? true,
		origin: head.origin,
		client: head.client,
		app_url: appUrl(head.thread_id),
		held: open && holding ? holding.shape(head) : null,
	};
}

/** `t3_thread` for a held dispatch. */
export function heldThreadView(deps: ThreadDeps, head: HeldHead) {
	return {
		...common(deps, head),
		session: { provider: null, model: null, status: null },
		latest_run: null,
		runs: [],
		queued: [],
		question: null,
		item: null,
		branch_temporary: false,
		forked_from: null,
		inherited: null,
		pull_requests: [],
	};
}

/** A `t3_threads` row for a held dispatch (state `held`). */
export function heldListRow(deps: ThreadDeps, head: HeldHead) {
	return {
		...common(deps, head),
		state: "held" as const,
		pending: null,
		latest_run: null,
		...NO_FAILURE,
		updated_at: new Date(head.since).toISOString(),
		archived: false,
		match: null,
	};
}

/**
 * The caller's held dispatches as `t3_threads` rows, newest first: a `machine` filter matches
 * only one held for that machine by name (never one held for a pattern); `project` the project
 * as given; `query` the title.
 */
export function heldRows(
	deps: ThreadDeps,
	filters: { machine?: string; project?: string; query?: string },
) {
	const rows: ReturnType<typeof heldListRow>[] = [];
	const holding = deps.holding;
	if (!holding) return rows;
	const query = filters.query?.toLowerCase();
	for (const head of holding.open()) {
		if (deps.client && head.client !== deps.client.name) continue;
		if (
			filters.machine !== undefined &&
			!(head.named && head.machine === filters.machine)
		)
			continue;
		if (filters.project !== undefined && head.project !== filters.project)
			continue;
		if (query !== undefined && !head.title.toLowerCase().includes(query))
			continue;
		rows.push(heldListRow(deps, head));
	}
	return rows.reverse();
}
