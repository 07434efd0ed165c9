/**
 * MCP tasks (src/tasks): one row per task handle a `t3_wait` or waiting `t3_dispatch` answered
 * with, so `tasks/get` answers after a restart and an open task resumes its wait. The wire shape
 * is built elsewhere; this is storage only.
 */
import { maskJsonText, maskSecrets } from "../util/redact.ts";
import type { Db } from "./db.ts";

/** The texts of a row that quote T3 (places, results, status lines), masked before stored. */
function masked<T extends Partial<TaskRow>>(row: T): T {
	const out = { ...row };
	for (const key of ["threads", "base", "result"] as const)
		if (typeof out[key] === "string") out[key] = maskJsonText(out[key]);
	if (typeof out.status_message === "string")
		out.status_message = maskSecrets(out.status_message);
	return out;
}

/** Where one waited-on thread lives, so whether it is visible now is known offline. */
export interface TaskPlace {
	thread_id: string;
	machine: string;
	project_id: string;
	project_title: string | null;
	project_path: string | null;
}

export type TaskStatus = "working" | "completed" | "cancelled" | "failed";

export interface TaskRow {
	task_id: string;
	tool: string;
	status: TaskStatus;
	/** JSON `TaskPlace[]`, in the order the call named the threads. */
	threads: string;
	/** JSON of what the waiting call returns beside the wait (t3_dispatch's result), or null. */
	base: string | null;
	/** An explicit `timeout`: when the task completes with outcome `timeout`; null = its TTL. */
	deadline_at: number | null;
	/** JSON CallToolResult once completed. */
	result: string | null;
	status_message: string | null;
	created_at: number;
	updated_at: number;
	ttl_ms: number;
	/** The client that created it; null for rows written before clients existed (`default`). */
	client: string | null;
}

export function createTaskStore(db: Db) {
	const insert = db.query(
		`INSERT INTO tasks (task_id, tool, status, threads, base, deadline_at, result, status_message, created_at, updated_at, ttl_ms, client)
		 VALUES ($task_id, $tool, $status, $threads, $base, $deadline_at, $result, $status_message, $created_at, $updated_at, $ttl_ms, $client)`,
	);
	const update = db.query(
		"UPDATE tasks SET status = $status, result = $result, status_message = $status_message, updated_at = $updated_at WHERE task_id = $task_id",
	);
	const all = db.query<TaskRow, Record<string, never>>(
		"SELECT * FROM tasks ORDER BY created_at, rowid",
	);
	const remove = db.query("DELETE FROM tasks WHERE task_id = $id");
	return {
		insert: (row: TaskRow) => {
			insert.run({ ...masked(row) });
		},
		update: (
			row: Pick<
				TaskRow,
				"task_id" | "status" | "result" | "status_message" | "updated_at"
			>,
		) => {
			update.run({ ...masked(row) });
		},
		all: (): TaskRow[] => all.all({}),
		remove: (taskId: string) => {
			remove.run({ id: taskId });
		},
	};
}

export type TaskStore = ReturnType<typeof createTaskStore>;
