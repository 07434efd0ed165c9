/**
 * MCP Tasks (`io.modelcontextprotocol/tasks`) for `t3_wait` and a waiting `t3_dispatch`: a task
 * is a wait that outlives its request. Open tasks share one shell listener per machine, one
 * deadline timer and one retry timer for the whole process (no timer, socket or poll per task);
 * a change on a waited-on thread looks at it exactly as `t3_wait` does (threads/wait.ts), so a
 * task completes with the result the blocking call would have returned. Rows live in the state
 * file: after a restart an open task looks again once its machine has caught up, so a run that
 * settled meanwhile completes it with that outcome. The in-memory record is updated first and
 * the row written after (one commit per turn), so a completion is visible at once; a crash
 * before the write only means the task looks again, with the same result. This is the service
 * itself; the waiting (task-waiting.ts), the timer (task-deadlines.ts), the records
 * (task-record.ts), the wire shape (task-wire.ts) and the results (task-result.ts) are beside it.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { DEFAULT_CLIENT } from "../config/clients.ts";
import type { Fleet } from "../fleet/fleet.ts";
import type { Db } from "../store/db.ts";
import {
	createGroupCommit,
	type GroupCommit,
	walSync,
} from "../store/group-commit.ts";
import {
	createTaskStore,
	type TaskPlace,
	type TaskStatus,
} from "../store/tasks.ts";
import type { ThreadDeps } from "../threads/deps.ts";
import { locateThread } from "../threads/locate.ts";
import { heldOf } from "../threads/wait/held-wait.ts";
import type { WaitReport } from "../threads/wait/wait.ts";
import { createTaskDeadlines } from "./task-deadlines.ts";
import {
	countByStatus,
	DEFAULT_TASK_TTL_S,
	expiresAt,
	loadTasks,
	MAX_TASKS,
	newTaskId,
	newTaskRow,
	placeOf,
	type TaskRec,
} from "./task-record.ts";
import {
	CANCELLED_MESSAGE,
	deadlineEnd,
	taskResult,
	type WaitEnd,
} from "./task-result.ts";
import { createTaskWaiting } from "./task-waiting.ts";
import { wireTask } from "./task-wire.ts";

export {
	DEFAULT_TASK_TTL_S,
	MAX_TASK_TTL_S,
	MAX_TASKS,
	newTaskId,
} from "./task-record.ts";

const DEFAULT_POLL_INTERVAL_MS = 1_000;

export type TaskTool = "t3_wait" | "t3_dispatch";

/** What a waiting call returns, from how the wait ended (the MCP layer shapes it). */
export type TaskShaper = (
	tool: string,
	base: Record<string, unknown> | null,
	end: { report: WaitReport } | { error: string },
) => CallToolResult;

/** A task as `tasks/get` and `notifications/tasks` carry it (2026-07-28 `DetailedTask`). */
/** The machine of a task's place while its thread is a held dispatch (no machine yet). */
const HELD_PLACE = "";

export interface DetailedTask {
	taskId: string;
	status: TaskStatus;
	statusMessage?: string;
	createdAt: string;
	lastUpdatedAt: string;
	ttlMs: number | null;
	pollIntervalMs?: number;
	result?: Record<string, unknown>;
}

export interface TaskSpec {
	tool: TaskTool;
	threadIds: string[];
	base?: Record<string, unknown> | null;
	/** An explicit `timeout` (seconds); without it the wait lasts until the task's TTL. */
	timeoutS?: number;
}

export interface TaskService {
	/** Creates a task, durably; it starts waiting at once. */
	create(spec: TaskSpec): Promise<DetailedTask>;
	/** The task now; undefined when unknown, expired, or its thread is not visible any more. */
	get(taskId: string): DetailedTask | undefined;
	/** Ends an open task as cancelled (never touches the run); false when unknown. */
	cancel(taskId: string): boolean;
	/**
	 * Calls `listener` with the task on each change, and with undefined once it is gone (expired,
	 * or pushed out of the bounded store); returns the unsubscribe.
	 */
	listen(
		taskId: string,
		listener: (task: DetailedTask | undefined) => void,
	): () => void;
	/** Tasks held now, by status (for /metrics). */
	counts(): Record<TaskStatus, number>;
	start(): void;
	stop(): Promise<void>;
	/**
	 * The tasks of one client (CONTRACT.md "Clients and rights"): it creates tasks it owns and
	 * finds only those, judged by its own reach; another client's task is "not found".
	 */
	forClient(client: string, deps: ThreadDeps): TaskService;
}

export interface TaskServiceOptions {
	deps: ThreadDeps;
	fleet: Fleet;
	db: Db;
	shape: TaskShaper;
	ttlS?: number;
	pollIntervalMs?: number;
	/** How many tasks are kept at most (default MAX_TASKS). */
	maxTasks?: number;
	newTaskId?: () => string;
}

export function createTaskService(options: TaskServiceOptions): TaskService {
	const { deps, fleet, db, shape } = options;
	const ttlMs = (options.ttlS ?? DEFAULT_TASK_TTL_S) * 1000;
	const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
	const mintId = options.newTaskId ?? newTaskId;
	const maxTasks = options.maxTasks ?? MAX_TASKS;
	const store = createTaskStore(db);
	const wal = walSync(db);
	const commits: GroupCommit = createGroupCommit(db, undefined, wal);
	const now = () => deps.now();

	const tasks = new Map<string, TaskRec>();
	const listeners = new Map<
		string,
		Set<(task: DetailedTask | undefined) => void>
	>();
	const waiting = createTaskWaiting({ deps, fleet, tasks, complete, notify });
	const deadlines = createTaskDeadlines({
		tasks,
		now,
		expire: drop,
		timeOut: (rec) => complete(rec, deadlineEnd(deps, fleet, rec)),
	});
	let started = false;

	const write = (fn: () => void) => {
		commits.run(fn).catch((error) => {
			deps.log.error("task state write failed", { error });
		});
	};

	/** The caller's own live task: owned by it, not expired, every thread in its reach. */
	const own = (
		taskId: string,
		client: string,
		reach: Fleet,
	): TaskRec | undefined => {
		const rec = tasks.get(taskId);
		if (!rec || (rec.row.client ?? DEFAULT_CLIENT) !== client) return undefined;
		if (expiresAt(rec) <= now()) return undefined;
		return rec.places.every(
			(place) => place.machine === HELD_PLACE || reach.allowsRecord(place),
		)
			? rec
			: undefined;
	};

	/** A held dispatch's place (no machine yet), shown as such until it starts. */
	const heldPlace = (threadId: string): TaskPlace => ({
		thread_id: threadId,
		machine: HELD_PLACE,
		project_id: "",
		project_title: null,
		project_path: null,
	});

	const wire = (rec: TaskRec) => wireTask(rec, fleet, pollIntervalMs, now);

	function notify(rec: TaskRec): void {
		const set = listeners.get(rec.row.task_id);
		if (!set?.size) return;
		const task = wire(rec);
		for (const listener of set) {
			try {
				listener(task);
			} catch (error) {
				deps.log.warn("task listener failed", { error });
			}
		}
	}

	function finish(
		rec: TaskRec,
		status: TaskStatus,
		result: CallToolResult | null,
		message: string,
	): void {
		if (rec.row.status !== "working") return;
		rec.row.status = status;
		rec.row.result = result === null ? null : JSON.stringify(result);
		rec.row.status_message = message;
		rec.row.updated_at = now();
		waiting.unwatch(rec);
		notify(rec);
		const { task_id, result: r, status_message, updated_at } = rec.row;
		write(() =>
			store.update({
				task_id,
				status,
				result: r,
				status_message,
				updated_at,
			}),
		);
		deadlines.arm();
	}

	function complete(rec: TaskRec, end: WaitEnd): void {
		const { result, message } = taskResult(deps, shape, rec, end);
		finish(rec, "completed", result, message);
	}

	function drop(rec: TaskRec): void {
		tasks.delete(rec.row.task_id);
		waiting.unwatch(rec);
		for (const listener of listeners.get(rec.row.task_id) ?? []) {
			try {
				listener(undefined);
			} catch (error) {
				deps.log.warn("task listener failed", { error });
			}
		}
		listeners.delete(rec.row.task_id);
		const id = rec.row.task_id;
		write(() => store.remove(id));
	}

	/** Keeps the store bounded: the oldest finished task goes first, else the oldest open one. */
	function makeRoom(): void {
		while (tasks.size >= maxTasks) {
			let victim: TaskRec | undefined;
			for (const rec of tasks.values()) {
				if (rec.row.status !== "working") {
					victim = rec;
					break;
				}
			}
			victim ??= tasks.values().next().value as TaskRec;
			drop(victim);
		}
	}

	/** What one client sees; the service itself is the view of `default`. */
	const view = (
		client: string,
		callerDeps: ThreadDeps,
	): Omit<TaskService, "counts" | "start" | "stop" | "forClient"> => ({
		async create(spec) {
			// A held dispatch has no machine yet: its place is empty until it starts.
			const places: TaskPlace[] = await Promise.all(
				spec.threadIds.map(async (id) =>
					heldOf(callerDeps, id)
						? heldPlace(id)
						: placeOf(await locateThread(callerDeps, id)),
				),
			);
			const at = now();
			const row = newTaskRow(mintId(), spec, places, at, ttlMs, client);
			// A task handle is returned only once `tasks/get` would find it, also after a crash.
			await commits.run(() => store.insert(row));
			makeRoom();
			const rec: TaskRec = { row, places, base: spec.base ?? null };
			tasks.set(row.task_id, rec);
			waiting.watch(rec);
			deadlines.arm();
			// Subscribed before this look, so nothing between the caller's look and now is missed.
			for (const place of places) waiting.check(place.thread_id);
			return wire(rec);
		},
		get(taskId) {
			const rec = own(taskId, client, callerDeps.fleet);
			return rec ? wire(rec) : undefined;
		},
		cancel(taskId) {
			const rec = own(taskId, client, callerDeps.fleet);
			if (!rec) return false;
			finish(rec, "cancelled", null, CANCELLED_MESSAGE);
			return true;
		},
		listen(taskId, listener) {
			let set = listeners.get(taskId);
			if (!set) {
				set = new Set();
				listeners.set(taskId, set);
			}
			set.add(listener);
			return () => {
				const current = listeners.get(taskId);
				current?.delete(listener);
				if (current?.size === 0) listeners.delete(taskId);
			};
		},
	});

	const service: TaskService = {
		...view(DEFAULT_CLIENT, deps),
		forClient: (client, callerDeps) => ({
			...service,
			...view(client, callerDeps),
		}),
		counts: () => countByStatus(tasks.values()),
		start() {
			if (started) return;
			started = true;
			for (const rec of loadTasks(store, now())) {
				tasks.set(rec.row.task_id, rec);
				if (rec.row.status === "working") waiting.watch(rec);
			}
			waiting.start();
			deadlines.arm();
		},
		async stop() {
			deadlines.stop();
			waiting.stop();
			listeners.clear();
			await new Promise<void>((resolve) => setImmediate(resolve));
			await commits.drained();
			wal?.close();
		},
	};
	return service;
}
