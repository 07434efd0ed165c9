/**
 * A task as `tasks/get` and `notifications/tasks` carry it: an open task says how its first
 * thread is doing (as `t3_wait` would), a completed one carries its result. Masked as tool
 * results are, since both quote T3.
 */
import type { Fleet } from "../fleet/fleet.ts";
import type { TaskPlace } from "../store/tasks.ts";
import { statusLine } from "../threads/wait/progress.ts";
import { maskDeep } from "../util/redact.ts";
import { elapsedS, type TaskRec } from "./task-record.ts";
import type { DetailedTask } from "./task-service.ts";

export function wireTask(
	rec: TaskRec,
	fleet: Fleet,
	pollIntervalMs: number,
	now: () => number,
): DetailedTask {
	const { row } = rec;
	let statusMessage = row.status_message ?? undefined;
	if (row.status === "working") {
		const first = rec.places[0] as TaskPlace;
		const entry = fleet.get(first.machine);
		statusMessage = entry
			? `Waiting on thread ${first.thread_id}: ${statusLine({ entry, threadId: first.thread_id }, { now: now(), waitedS: elapsedS(rec, now()) })}`
			: `Waiting on thread ${first.thread_id}.`;
	}
	// The safety net, as for tool results: the status line and result quote T3.
	return maskDeep({
		taskId: row.task_id,
		status: row.status,
		...(statusMessage === undefined ? {} : { statusMessage }),
		createdAt: new Date(row.created_at).toISOString(),
		lastUpdatedAt: new Date(row.updated_at).toISOString(),
		ttlMs: row.ttl_ms,
		pollIntervalMs,
		...(row.status === "completed" && row.result !== null
			? { result: JSON.parse(row.result) as Record<string, unknown> }
			: {}),
	});
}
