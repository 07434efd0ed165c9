/**
 * A task as the service holds it: its state-file row, the places of the threads it waits on and
 * the waiting call's base result, parsed once. New rows, rows read back after a restart (the
 * expired ones removed), ids, and when a task's wait ends and its handle expires.
 */
import type {
	TaskPlace,
	TaskRow,
	TaskStatus,
	TaskStore,
} from "../store/tasks.ts";
import type { LocatedThread } from "../threads/locate.ts";
import type { TaskSpec } from "./task-service.ts";

export const DEFAULT_TASK_TTL_S = 86_400;
export const MAX_TASK_TTL_S = 604_800;
/** At most this many tasks are kept; past it the oldest finished (then oldest open) go first. */
export const MAX_TASKS = 10_000;

export interface TaskRec {
	row: TaskRow;
	places: TaskPlace[];
	base: Record<string, unknown> | null;
	/** The run status last reported to listeners (a change is a notification). */
	lastRunStatus?: string | null;
}

/** 144 random bits, URL-safe: task ids are bearer-like handles. */
export function newTaskId(): string {
	return Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString(
		"base64url",
	);
}

/** Where a located thread lives, as a task row keeps it. */
export function placeOf(located: LocatedThread): TaskPlace {
	return {
		thread_id: located.threadId,
		machine: located.entry.config.name,
		project_id: located.project.id,
		project_title: located.project.title,
		project_path: located.project.workspaceRoot,
	};
}

/** The row of a task created now: working, its explicit timeout capped at its TTL. */
export function newTaskRow(
	taskId: string,
	spec: TaskSpec,
	places: TaskPlace[],
	at: number,
	ttlMs: number,
	/** The client that owns it (tasks are per client). */
	client: string,
): TaskRow {
	return {
		task_id: taskId,
		client,
		tool: spec.tool,
		status: "working",
		threads: JSON.stringify(places),
		base: spec.base ? JSON.stringify(spec.base) : null,
		deadline_at:
			spec.timeoutS === undefined
				? null
				: Math.min(at + spec.timeoutS * 1000, at + ttlMs),
		result: null,
		status_message: null,
		created_at: at,
		updated_at: at,
		ttl_ms: ttlMs,
	};
}

/** The tasks of the state file still alive at `at`; the expired rows are removed. */
export function loadTasks(store: TaskStore, at: number): TaskRec[] {
	const live: TaskRec[] = [];
	for (const row of store.all()) {
		const rec: TaskRec = {
			row,
			places: JSON.parse(row.threads) as TaskPlace[],
			base:
				row.base === null
					? null
					: (JSON.parse(row.base) as Record<string, unknown>),
		};
		if (expiresAt(rec) <= at) {
			store.remove(row.task_id);
			continue;
		}
		live.push(rec);
	}
	return live;
}

export const elapsedS = (rec: TaskRec, at: number) =>
	Math.round((at - rec.row.created_at) / 100) / 10;

export const expiresAt = (rec: TaskRec) => rec.row.created_at + rec.row.ttl_ms;

/** When an open task's wait ends: its explicit timeout, else its expiry. */
export const waitEndsAt = (rec: TaskRec) =>
	rec.row.deadline_at ?? expiresAt(rec);

/** Tasks by status (for /metrics). */
export function countByStatus(
	recs: Iterable<TaskRec>,
): Record<TaskStatus, number> {
	const counts: Record<TaskStatus, number> = {
		working: 0,
		completed: 0,
		cancelled: 0,
		failed: 0,
	};
	for (const rec of recs) counts[rec.row.status]++;
	return counts;
}
