/**
 * `t3_watch`: list tracked threads, or switch a thread's events on or off. Watching a thread we
 * never dispatched starts tracking it with this call's origin; its earlier runs stay silent.
 */
import { settledOrdinal } from "../../t3/derive/derive.ts";
import type { ThreadDeps } from "../deps.ts";
import { locateThread, readDetail } from "../locate.ts";

export interface WatchedThread {
	thread_id: string;
	machine: string;
	title: string;
	status: string | null;
	origin: string | null;
}

export function listTracked(deps: ThreadDeps) {
	const watched: WatchedThread[] = [];
	const unwatched: WatchedThread[] = [];
	for (const record of deps.threads.all()) {
		const shell = deps.fleet
			.get(record.machine)
			?.machine.thread(record.thread_id);
		const row = {
			thread_id: record.thread_id,
			machine: record.machine,
			title: shell?.title ?? record.title,
			status: shell?.status ?? record.last_status,
			origin: record.origin,
		};
		(record.watched === 1 ? watched : unwatched).push(row);
	}
	return { watched, unwatched };
}

export async function setWatch(
	deps: ThreadDeps,
	threadId: string,
	enabled: boolean,
	origin: string | null,
	onWatched: (threadId: string) => void,
) {
	const located = await locateThread(deps, threadId);
	const record = deps.threads.get(threadId);
	const now = deps.now();
	if (!record) {
		const { projection } = await readDetail(located);
		deps.db.transaction(() => {
			deps.threads.upsert({
				threadId,
				machine: located.entry.config.name,
				projectId: located.project.id,
				projectTitle: located.project.title,
				projectPath: located.project.workspaceRoot,
				title: (located.shell ?? projection.thread).title,
				origin,
				watched: enabled,
				now,
			});
			deps.threads.setBaseline(threadId, settledOrdinal(projection));
		})();
	} else if (enabled && record.watched !== 1) {
		// Runs that settled while unwatched stay silent; a run still going will report.
		const { projection } = await readDetail(located);
		deps.db.transaction(() => {
			deps.threads.setWatched(threadId, true, origin ?? record.origin, now);
			deps.threads.setBaseline(
				threadId,
				Math.max(record.baseline_ordinal, settledOrdinal(projection)),
			);
		})();
	} else {
		deps.threads.setWatched(
			threadId,
			enabled,
			enabled ? (origin ?? record.origin) : record.origin,
			now,
		);
	}
	if (enabled) onWatched(threadId);
	return { thread_id: threadId, watched: enabled };
}
