/**
 * The one timer for all tasks, armed for the earliest explicit timeout of an open task or expiry
 * of any task: when it fires, expired tasks are dropped and open tasks past their timeout end
 * with outcome `timeout`.
 */
import { expiresAt, type TaskRec, waitEndsAt } from "./task-record.ts";

export interface TaskDeadlinesOptions {
	tasks: Map<string, TaskRec>;
	now: () => number;
	/** The task's handle expired: it is dropped. */
	expire(rec: TaskRec): void;
	/** The open task's explicit timeout passed. */
	timeOut(rec: TaskRec): void;
}

export interface TaskDeadlines {
	/** Arms the one timer for the earliest explicit timeout or expiry. */
	arm(): void;
	stop(): void;
}

export function createTaskDeadlines(
	options: TaskDeadlinesOptions,
): TaskDeadlines {
	const { tasks, now, expire, timeOut } = options;
	let dueTimer: ReturnType<typeof setTimeout> | undefined;
	let dueAt = Number.POSITIVE_INFINITY;
	let stopped = false;

	function arm(): void {
		if (stopped) return;
		let next = Number.POSITIVE_INFINITY;
		for (const rec of tasks.values()) {
			const at =
				rec.row.status === "working" ? waitEndsAt(rec) : expiresAt(rec);
			if (at < next) next = at;
		}
		if (next === dueAt && dueTimer !== undefined) return;
		if (dueTimer !== undefined) clearTimeout(dueTimer);
		dueTimer = undefined;
		dueAt = next;
		if (next === Number.POSITIVE_INFINITY) return;
		// setTimeout holds at most ~24.8 days; a TTL is at most 7.
		dueTimer = setTimeout(onDue, Math.max(0, next - now()));
	}

	function onDue(): void {
		dueTimer = undefined;
		dueAt = Number.POSITIVE_INFINITY;
		const at = now();
		for (const rec of [...tasks.values()]) {
			if (expiresAt(rec) <= at) {
				expire(rec);
				continue;
			}
			if (
				rec.row.status === "working" &&
				rec.row.deadline_at !== null &&
				rec.row.deadline_at <= at
			)
				timeOut(rec);
		}
		arm();
	}

	return {
		arm,
		stop() {
			stopped = true;
			if (dueTimer !== undefined) clearTimeout(dueTimer);
		},
	};
}
