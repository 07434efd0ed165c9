/**
 * `t3_threads` rows: a page's threads shaped for the answer, with their run failure, state,
 * place and what this connector tracks about them (watched, origin).
 */

import type { RunFailure } from "../../t3/derive/run-failure.ts";
import { isPinned } from "../control/organize.ts";
import type { ThreadDeps } from "../deps.ts";
import { placeShape } from "../dispatch/workspace.ts";
import { appUrl, type ProjectRef, projectRef } from "../shapes.ts";
import type { Candidate } from "./list-page.ts";
import { listedFailures } from "./listed-failure.ts";
import type { MessageMatch } from "./message-search.ts";
import { listedState } from "./pending-resumability.ts";
import {
	backgroundTasks,
	type Pending,
	pendingOf,
	snoozedUntil,
	type ThreadState,
} from "./thread-state.ts";

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
	/** Whether T3 shows the thread pinned (false on a T3 without pins). */
	pinned: boolean;
	background_tasks: number;
	updated_at: string | null;
	archived: boolean;
	watched: boolean;
	origin: string | null;
	client: string | null;
	/** T3's own link to the thread. */
	app_url: string;
	/** How T3's message search found it; null when found by title / latest message only. */
	match: MessageMatch | null;
}

/** The ordinal T3 writes into run ids (rows.ts); shown only as a convenience, null when absent. */
function ordinalOf(runId: string): number | null {
	const match = /:ordinal:(\d+)$/.exec(runId);
	return match ? Number(match[1]) : null;
}

/** The page's rows; `archived` when listing archived threads (`archived: true`). */
export async function listedRows(
	deps: ThreadDeps,
	rows: Candidate[],
	archived: boolean,
): Promise<ListedThread[]> {
	// One read for the page's records: the store may track thousands of threads.
	const records = deps.threads.getMany(rows.map((r) => r.thread.id));
	const failures = await listedFailures(
		rows.map(({ entry, thread }) => ({ machine: entry.machine, thread })),
	);
	return rows.map(({ entry, thread, project, match }, i) => {
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
			pinned: isPinned(thread),
			background_tasks: backgroundTasks(thread),
			updated_at: thread.updatedAt ?? null,
			archived: archived || Boolean(thread.archivedAt),
			watched: record ? record.watched === 1 : false,
			origin: record?.origin ?? null,
			client: record?.client ?? null,
			app_url: appUrl(thread.id),
			match,
			held: null,
		};
	});
}
