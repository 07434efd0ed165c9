/**
 * `t3_threads` rows for tracked threads that vanished from their machine (a T3 server that came
 * back with empty state, or a delete elsewhere): no machine lists them any more, so without
 * these rows they would silently drop out of the list. They show with status "missing".
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { ProjectShell, ThreadShell } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { MISSING_STATUS } from "../wait/vanish.ts";
import { buildListing, type Listing } from "./thread-index.ts";

export function vanishedListing(
	deps: ThreadDeps,
	entry: FleetMachine,
	/** The `project` filter (id, title or path), if any. */
	ref: string | undefined,
): { list: Listing; projects: Map<string, ProjectShell> } | undefined {
	const records = deps.threads
		.missingOn(entry.config.name)
		.filter((r) => entry.machine.thread(r.thread_id) === undefined);
	if (records.length === 0) return undefined;
	const live = new Map(entry.machine.projects().map((p) => [p.id, p]));
	const projects = new Map<string, ProjectShell>();
	const threads: ThreadShell[] = [];
	for (const r of records) {
		// A server that lost its state may have lost the project too: the one last seen.
		const project = live.get(r.project_id) ?? {
			id: r.project_id,
			title: r.project_title ?? "",
			workspaceRoot: r.project_path ?? "",
			defaultModelSelection: null,
		};
		if (
			ref !== undefined &&
			![project.id, project.title, project.workspaceRoot].includes(ref)
		)
			continue;
		projects.set(project.id, project);
		threads.push({
			id: r.thread_id,
			projectId: r.project_id,
			title: r.title,
			latestRunId: r.last_run_id,
			activeRunId: null,
			status: MISSING_STATUS as ThreadShell["status"],
			pendingRuntimeRequest: null,
			latestVisibleMessage: null,
			updatedAt: new Date(r.updated_at).toISOString(),
		});
	}
	return threads.length > 0
		? { list: buildListing(threads), projects }
		: undefined;
}
