/**
 * MCP Tasks (`io.modelcontextprotocol/tasks`) for `t3_wait` and a waiting `t3_dispatch`: a task
 * is a wait that outlives its request. Open tasks share one shell listener per machine, one
 * deadline timer and one retry timer for the whole process (no timer, socket or poll per task);
 * a change on a waited-on thread looks at it exactly as `t3_wait` does (threads/wait.ts), so a
 * task completes with the result the blocking call would have returned. Rows live in the state
 * file: after a restart an open task looks again once its machine has caught up, so a run that
 * settled meanwhile completes it with that outcome. The in-memory record is updated first and
 * the row written after (one commit per turn), so a completion is visible at once; a crash
 * before the write only means the task looks again, with the same result.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Fleet, FleetMachine } from "../fleet/fleet.ts";
import type { Db } from "../store/db.ts";
import {
	createGroupCommit,
	type GroupCommit,
	walSync,
} from "../store/group-commit.ts";
import {
	createTaskStore,
	type TaskPlace,
	type TaskRow,
	type TaskStatus,
} from "../store/tasks.ts";
import { NO_FAILURE } from "../t3/derive/run-failure.ts";
import type { ThreadDeps } from "../threads/deps.ts";
import { ThreadError } from "../threads/errors.ts";
import { type LocatedThread, locateThread } from "../threads/locate.ts";
import { isNotFound, isOwnDelete } from "../threads/wait/vanish.ts";
import {
	evaluate,
	locateOrGone,
	missingResult,
	type Settled,
	statusLine,
	timeoutReport,
	type WaitReport,
} from "../threads/wait/wait.ts";
import { maskDeep } from "../util/redact.ts";

export const DEFAULT_TASK_TTL_S = 86_400;
export const MAX_TASK_TTL_S = 604_800;
/** At most this many tasks are kept; past it the oldest finished (then oldest open) go first. */
export const MAX_TASKS = 10_000;
const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** After a failed read, how soon the threads it concerned are looked at again. */
const RETRY_MS = 2_000;

export type TaskTool = "t3_wait" | "t3_dispatch";

/** What a waiting call returns, from how the wait ended (the MCP layer shapes it). */
export type TaskShaper = (
	tool: string,
	base: Record<string, unknown> | null,
	end: { report: WaitReport } | { error: string },
) => CallToolResult;

/** A task as `tasks/get` and `notifications/tasks` carry it (2026-07-28 `DetailedTask`). */
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

interface Rec {
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

const CANCELLED_MESSAGE =
	"Cancelled: this task no longer waits. The T3 run was not interrupted and keeps going (t3_interrupt stops it); call t3_wait to wait on it again.";

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

	const tasks = new Map<string, Rec>();
	/** Open tasks by waited-on thread, with the thread's follow lease. */
	const byThread = new Map<
		string,
		{ tasks: Set<string>; release?: () => void }
	>();
	const listeners = new Map<
		string,
		Set<(task: DetailedTask | undefined) => void>
	>();
	const inFlight = new Map<string, { again: boolean }>();
	const retrying = new Set<string>();
	let retryTimer: ReturnType<typeof setTimeout> | undefined;
	let dueTimer: ReturnType<typeof setTimeout> | undefined;
	let dueAt = Number.POSITIVE_INFINITY;
	const unsubscribes: (() => void)[] = [];
	let started = false;
	let stopped = false;

	const write = (fn: () => void) => {
		commits.run(fn).catch((error) => {
			deps.log.error("task state write failed", { error });
		});
	};

	const elapsedS = (rec: Rec) =>
		Math.round((now() - rec.row.created_at) / 100) / 10;

	const visible = (rec: Rec) =>
		rec.places.every((place) => fleet.allowsRecord(place));

	const expiresAt = (rec: Rec) => rec.row.created_at + rec.row.ttl_ms;
	const waitEndsAt = (rec: Rec) => rec.row.deadline_at ?? expiresAt(rec);

	function wire(rec: Rec): DetailedTask {
		const { row } = rec;
		let statusMessage = row.status_message ?? undefined;
		if (row.status === "working") {
			const first = rec.places[0] as TaskPlace;
			const entry = fleet.get(first.machine);
			statusMessage = entry
				? `Waiting on thread ${first.thread_id}: ${statusLine({ entry, threadId: first.thread_id }, elapsedS(rec))}`
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

	function notify(rec: Rec): void {
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

	function watch(rec: Rec): void {
		for (const place of rec.places) {
			let entry = byThread.get(place.thread_id);
			if (!entry) {
				entry = { tasks: new Set() };
				byThread.set(place.thread_id, entry);
				// Following the thread's own stream is what makes a completion arrive with its frame.
				entry.release = fleet
					.get(place.machine)
					?.machine.follow?.(place.thread_id);
			}
			entry.tasks.add(rec.row.task_id);
		}
	}

	function unwatch(rec: Rec): void {
		for (const place of rec.places) {
			const entry = byThread.get(place.thread_id);
			if (!entry) continue;
			entry.tasks.delete(rec.row.task_id);
			if (entry.tasks.size === 0) {
				byThread.delete(place.thread_id);
				entry.release?.();
				retrying.delete(place.thread_id);
			}
		}
	}

	function finish(
		rec: Rec,
		status: TaskStatus,
		result: CallToolResult | null,
		message: string,
	): void {
		if (rec.row.status !== "working") return;
		rec.row.status = status;
		rec.row.result = result === null ? null : JSON.stringify(result);
		rec.row.status_message = message;
		rec.row.updated_at = now();
		unwatch(rec);
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
		armDue();
	}

	function complete(
		rec: Rec,
		end: { report: WaitReport } | { error: string },
	): void {
		let result: CallToolResult;
		try {
			result = shape(rec.row.tool, rec.base, end);
		} catch (error) {
			deps.log.error("task result could not be built", {
				task: rec.row.task_id,
				error,
			});
			result = {
				content: [
					{
						type: "text",
						text: `${rec.row.tool} failed unexpectedly; the server log has the details.`,
					},
				],
				isError: true,
			};
		}
		const message =
			"report" in end
				? `The wait ended with outcome "${end.report.outcome}" on thread ${end.report.thread_id}.`
				: end.error;
		finish(rec, "completed", result, message);
	}

	/** One look at a thread: how its run settled, or null while it has not (or cannot be read). */
	async function lookOnce(
		threadId: string,
	): Promise<
		{ settled: Settled; machine?: string } | { error: string } | null
	> {
		let located: LocatedThread;
		try {
			const found = await locateOrGone(deps, threadId);
			if ("outcome" in found) return { settled: found };
			located = found;
		} catch (error) {
			// Not on any machine reachable now: a machine's catch-up or a later change looks again.
			if (!(error instanceof ThreadError)) scheduleRetry(threadId, error);
			return null;
		}
		try {
			const settled = await evaluate(deps, located);
			return settled ? { settled } : null;
		} catch (error) {
			if (isNotFound(error)) {
				if (isOwnDelete(threadId))
					return {
						error: `Thread "${threadId}" was deleted with t3_delete while waiting on it.`,
					};
				return {
					settled: missingResult(threadId, located.entry.config.name),
				};
			}
			scheduleRetry(threadId, error);
			return null;
		}
	}

	function check(threadId: string): void {
		if (stopped || !byThread.has(threadId)) return;
		const state = inFlight.get(threadId);
		if (state) {
			state.again = true;
			return;
		}
		const mine = { again: false };
		inFlight.set(threadId, mine);
		void (async () => {
			try {
				do {
					mine.again = false;
					const seen = await lookOnce(threadId);
					if (seen) settleThread(threadId, seen);
				} while (mine.again && byThread.has(threadId) && !stopped);
			} catch (error) {
				deps.log.warn("task: look failed", { threadId, error });
			} finally {
				inFlight.delete(threadId);
			}
		})();
	}

	function settleThread(
		threadId: string,
		seen: { settled: Settled } | { error: string },
	): void {
		const entry = byThread.get(threadId);
		if (!entry) return;
		for (const taskId of [...entry.tasks]) {
			const rec = tasks.get(taskId);
			if (!rec) continue;
			if ("error" in seen) complete(rec, seen);
			else {
				const { note, ...settled } = seen.settled;
				complete(rec, {
					report: {
						...settled,
						elapsed_s: elapsedS(rec),
						...(note ? { note } : {}),
					},
				});
			}
		}
	}

	function scheduleRetry(threadId: string, error: unknown): void {
		deps.log.debug("task: evaluation failed", { threadId, error });
		retrying.add(threadId);
		if (retryTimer !== undefined || stopped) return;
		retryTimer = setTimeout(() => {
			retryTimer = undefined;
			const again = [...retrying];
			retrying.clear();
			for (const id of again) check(id);
		}, RETRY_MS);
	}

	/** Arms the one timer for the earliest explicit timeout or expiry. */
	function armDue(): void {
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
				drop(rec);
				continue;
			}
			if (
				rec.row.status === "working" &&
				rec.row.deadline_at !== null &&
				rec.row.deadline_at <= at
			) {
				const first = rec.places[0] as TaskPlace;
				const entry = fleet.get(first.machine);
				const report: WaitReport = entry
					? timeoutReport(deps, { entry, threadId: first.thread_id }, 0)
					: {
							thread_id: first.thread_id,
							outcome: "timeout",
							run_id: null,
							run_status: null,
							message: null,
							error: null,
							question: null,
							...NO_FAILURE,
							elapsed_s: 0,
						};
				complete(rec, { report: { ...report, elapsed_s: elapsedS(rec) } });
			}
		}
		armDue();
	}

	function drop(rec: Rec): void {
		tasks.delete(rec.row.task_id);
		unwatch(rec);
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
			let victim: Rec | undefined;
			for (const rec of tasks.values()) {
				if (rec.row.status !== "working") {
					victim = rec;
					break;
				}
			}
			victim ??= tasks.values().next().value as Rec;
			drop(victim);
		}
	}

	function onChange(entry: FleetMachine) {
		return (
			change: Parameters<Parameters<FleetMachine["machine"]["onChange"]>[0]>[0],
		) => {
			if (change.kind === "thread") {
				const id = change.thread.id;
				if (!byThread.has(id)) return;
				reportRunStatus(id, change.thread.status);
				check(id);
			} else if (change.kind === "thread.removed") {
				if (byThread.has(change.threadId)) check(change.threadId);
			} else if (change.kind === "snapshot" || change.kind === "synchronized") {
				for (const rec of tasks.values()) {
					if (rec.row.status !== "working") continue;
					for (const place of rec.places)
						if (place.machine === entry.config.name) check(place.thread_id);
				}
			}
		};
	}

	/** A listener hears when the run's status changes, not only when the task ends. */
	function reportRunStatus(threadId: string, status: string): void {
		const entry = byThread.get(threadId);
		if (!entry) return;
		for (const taskId of entry.tasks) {
			const rec = tasks.get(taskId);
			if (!rec || rec.places[0]?.thread_id !== threadId) continue;
			if (rec.lastRunStatus === status) continue;
			rec.lastRunStatus = status;
			if (listeners.get(taskId)?.size) notify(rec);
		}
	}

	return {
		async create(spec) {
			const located = await Promise.all(
				spec.threadIds.map((id) => locateThread(deps, id)),
			);
			const places: TaskPlace[] = located.map((l) => ({
				thread_id: l.threadId,
				machine: l.entry.config.name,
				project_id: l.project.id,
				project_title: l.project.title,
				project_path: l.project.workspaceRoot,
			}));
			const at = now();
			const row: TaskRow = {
				task_id: mintId(),
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
			// A task handle is returned only once `tasks/get` would find it, also after a crash.
			await commits.run(() => store.insert(row));
			makeRoom();
			const rec: Rec = { row, places, base: spec.base ?? null };
			tasks.set(row.task_id, rec);
			watch(rec);
			armDue();
			// Subscribed before this look, so nothing between the caller's look and now is missed.
			for (const place of places) check(place.thread_id);
			return wire(rec);
		},
		get(taskId) {
			const rec = tasks.get(taskId);
			if (!rec || expiresAt(rec) <= now() || !visible(rec)) return undefined;
			return wire(rec);
		},
		cancel(taskId) {
			const rec = tasks.get(taskId);
			if (!rec || expiresAt(rec) <= now() || !visible(rec)) return false;
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
		counts() {
			const counts: Record<TaskStatus, number> = {
				working: 0,
				completed: 0,
				cancelled: 0,
				failed: 0,
			};
			for (const rec of tasks.values()) counts[rec.row.status]++;
			return counts;
		},
		start() {
			if (started) return;
			started = true;
			const at = now();
			for (const row of store.all()) {
				const rec: Rec = {
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
				tasks.set(row.task_id, rec);
				if (row.status === "working") watch(rec);
			}
			for (const entry of fleet.list())
				unsubscribes.push(entry.machine.onChange(onChange(entry)));
			// Threads on machines already in sync are looked at now; the others on their catch-up.
			for (const id of byThread.keys()) check(id);
			armDue();
		},
		async stop() {
			stopped = true;
			for (const unsubscribe of unsubscribes) unsubscribe();
			if (dueTimer !== undefined) clearTimeout(dueTimer);
			if (retryTimer !== undefined) clearTimeout(retryTimer);
			for (const entry of byThread.values()) entry.release?.();
			byThread.clear();
			listeners.clear();
			await new Promise<void>((resolve) => setImmediate(resolve));
			await commits.drained();
			wal?.close();
		},
	};
}
