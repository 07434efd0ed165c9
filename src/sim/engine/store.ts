/**
 * The simulator's state: projects, thread aggregates and one global append-only event log
 * (PROTOCOL.md §8.1). Every mutation goes through `upsert`/`appendThreadEvent`, so the
 * projection served over HTTP and the domain events streamed over the socket never disagree.
 * It also derives the read models of PROTOCOL.md §7 (thread shell, projection, shell snapshot).
 */
import { BUSY_RUN_STATUSES } from "../../t3/model.ts";
import { newId, nowIso, type Row } from "./rows.ts";
import { visibleItemCount, visibleTurnItems } from "./visible-items.ts";

/** What T3's Stop and the shell's `activeRunId` take for a run in flight (idx 70189692800). */
export const INTERRUPTIBLE = new Set(["preparing", "starting", "running"]);

export type Collection =
	| "runs"
	| "attempts"
	| "nodes"
	| "providerSessions"
	| "providerThreads"
	| "providerTurns"
	| "runtimeRequests"
	| "messages"
	| "turnItems"
	| "checkpointScopes"
	| "checkpoints"
	| "contextTransfers";

const COLLECTIONS: Collection[] = [
	"runs",
	"attempts",
	"nodes",
	"providerSessions",
	"providerThreads",
	"providerTurns",
	"runtimeRequests",
	"messages",
	"turnItems",
	"checkpointScopes",
	"checkpoints",
	"contextTransfers",
];

export interface ThreadState {
	id: string;
	/** The AppThread row (identity, settings, organisation). */
	app: Row;
	rows: Record<Collection, Row[]>;
	lastSequence: number;
	lastError: string | null;
	/** Released shells: the failure class of the last failed run, and a usage limit's reset. */
	lastErrorClass: string | null;
	usageLimitResetAt: string | null;
	updatedAt: string;
	checkpointCount: number;
}

export interface ProjectState {
	row: Row;
	lastSequence: number;
}

/** Envelope fields besides id/threadId/occurredAt/type/payload (OBSERVED.md §5.5). */
export interface EventEnvelope {
	runId?: string;
	nodeId?: string;
	driver?: string;
	providerInstanceId?: string;
}

export interface LoggedEvent {
	sequence: number;
	threadId: string | null;
	projectId: string | null;
	/** The domain event as streamed on subscribeThread (null for project events). */
	event: Record<string, unknown> | null;
}

export type StoreListener = (entry: LoggedEvent) => void;

export interface Store {
	head(): number;
	events: LoggedEvent[];
	projects: Map<string, ProjectState>;
	threads: Map<string, ThreadState>;
	addProject(input: {
		id?: string;
		title: string;
		workspaceRoot: string;
		defaultThreadEnvMode?: "local" | "worktree";
	}): ProjectState;
	createThread(app: Row, env: EventEnvelope): ThreadState;
	/** Append a thread-level event whose payload is the AppThread row. */
	appendThreadEvent(
		thread: ThreadState,
		type: string,
		env?: EventEnvelope,
	): number;
	upsert(
		thread: ThreadState,
		collection: Collection,
		row: Row,
		type: string,
		env?: EventEnvelope,
	): number;
	/** Drop a row and append an event whose payload is not the row (e.g. provider-session.detached). */
	remove(
		thread: ThreadState,
		collection: Collection,
		id: string,
		type: string,
		payload: Record<string, unknown>,
		env?: EventEnvelope,
	): number;
	find(
		thread: ThreadState,
		collection: Collection,
		id: string,
	): Row | undefined;
	/** Active threads: not deleted and not archived. */
	liveThread(threadId: string): ThreadState | undefined;
	threadShell(thread: ThreadState): Row;
	projection(thread: ThreadState): Record<string, unknown>;
	/**
	 * The shell (§7): projects and active threads. `threads: false` leaves the threads out (a
	 * resumed subscription's metadata snapshot), without building every thread's shell.
	 */
	shellSnapshot(options?: { threads?: boolean }): Record<string, unknown>;
	subscribe(listener: StoreListener): () => void;
	/**
	 * A server that lost its state: threads and the event log are gone and sequences start
	 * again from zero; the configured projects are registered anew (same ids).
	 */
	wipeThreads(): void;
}

/**
 * A deep copy of a row. Rows are plain data, copied here property by property: a shell
 * snapshot copies every thread's row, and `structuredClone` (~5 µs a row against ~0.4) made the
 * simulator, not the connector, what a 500-machine start waited for. Anything that is not a
 * plain object or array (bytes, dates) still goes through `structuredClone`.
 */
function clone<T>(value: T): T {
	if (value === null || typeof value !== "object") return value;
	if (Array.isArray(value)) {
		const out = new Array(value.length);
		for (let i = 0; i < value.length; i++) out[i] = clone(value[i]);
		return out as T;
	}
	if (Object.getPrototypeOf(value) !== Object.prototype)
		return structuredClone(value);
	const out: Record<string, unknown> = {};
	for (const key of Object.keys(value))
		out[key] = clone((value as Record<string, unknown>)[key]);
	return out as T;
}

/** Run statuses that end a run's own work: after them only background work can be left. */
const SETTLED = new Set(["completed", "failed", "interrupted", "cancelled"]);

/**
 * The shell's `pendingBackgroundTasks` as T3 derives them (`derivePendingBackgroundWork`, idx
 * 70607754371): the rosters of the thread's provider threads (the active one when set), deduped
 * by task id, only once the latest run settled and no run is in flight (a rolled-back latest
 * run leaves nothing pending).
 */
export function pendingBackgroundWork(
	thread: ThreadState,
	latest: Row | undefined,
): Record<string, unknown>[] {
	const runs = thread.rows.runs;
	if (runs.some((r) => INTERRUPTIBLE.has(r.status as string))) return [];
	if (!latest || !SETTLED.has(latest.status as string)) return [];
	const active = thread.app.activeProviderThreadId;
	const tasks = new Map<string, Record<string, unknown>>();
	for (const providerThread of thread.rows.providerThreads) {
		if (active != null && providerThread.id !== active) continue;
		const roster = providerThread.pendingBackgroundTasks;
		const list = Array.isArray(roster) ? roster : [];
		for (const task of list as Record<string, unknown>[])
			if (typeof task.taskId === "string" && !tasks.has(task.taskId))
				tasks.set(task.taskId, clone(task));
	}
	return [...tasks.values()];
}

export interface StoreOptions {
	/** Shells carry `latestVisibleMessage` (default); false: null, as the newest T3 sends. */
	shellMessages?: boolean;
}

export function createStore(options: StoreOptions = {}): Store {
	const shellMessages = options.shellMessages !== false;
	let sequence = 0;
	const events: LoggedEvent[] = [];
	const projects = new Map<string, ProjectState>();
	const threads = new Map<string, ThreadState>();
	const listeners = new Set<StoreListener>();

	function log(entry: LoggedEvent): void {
		events.push(entry);
		for (const listener of [...listeners]) listener(entry);
	}

	function emit(
		thread: ThreadState,
		type: string,
		payload: unknown,
		env: EventEnvelope = {},
	): number {
		sequence += 1;
		const occurredAt = nowIso();
		thread.lastSequence = sequence;
		thread.updatedAt = occurredAt;
		const event = {
			id: `event:thread:${thread.id}:${newId()}`,
			threadId: thread.id,
			...env,
			occurredAt,
			type,
			payload: clone(payload),
		};
		log({ sequence, threadId: thread.id, projectId: null, event });
		return sequence;
	}

	function addProject(input: {
		id?: string;
		title: string;
		workspaceRoot: string;
		defaultThreadEnvMode?: "local" | "worktree";
	}): ProjectState {
		sequence += 1;
		const at = nowIso();
		const row: Row = {
			id: input.id ?? `project-${newId()}`,
			title: input.title,
			workspaceRoot: input.workspaceRoot,
			repositoryIdentity: null,
			defaultModelSelection: null,
			scripts: [],
			...(input.defaultThreadEnvMode
				? { defaultThreadEnvMode: input.defaultThreadEnvMode }
				: {}),
			createdAt: at,
			updatedAt: at,
		};
		const state = { row, lastSequence: sequence };
		projects.set(row.id, state);
		log({ sequence, threadId: null, projectId: row.id, event: null });
		return state;
	}

	function createThread(app: Row, env: EventEnvelope): ThreadState {
		const rows = Object.fromEntries(
			COLLECTIONS.map((c) => [c, [] as Row[]]),
		) as Record<Collection, Row[]>;
		const thread: ThreadState = {
			id: app.id,
			app,
			rows,
			lastSequence: 0,
			lastError: null,
			lastErrorClass: null,
			usageLimitResetAt: null,
			updatedAt: nowIso(),
			checkpointCount: 0,
		};
		threads.set(app.id, thread);
		emit(thread, "thread.created", app, env);
		return thread;
	}

	function upsert(
		thread: ThreadState,
		collection: Collection,
		row: Row,
		type: string,
		env?: EventEnvelope,
	): number {
		const list = thread.rows[collection];
		const index = list.findIndex((r) => r.id === row.id);
		if (index >= 0) list[index] = row;
		else list.push(row);
		return emit(thread, type, row, env);
	}

	function threadShell(thread: ThreadState): Row {
		const runs = thread.rows.runs;
		const latest = runs.reduce<Row | undefined>(
			(best, r) =>
				best === undefined || (r.ordinal as number) > (best.ordinal as number)
					? r
					: best,
			undefined,
		);
		// As T3 derives them (idx 70189692800): `activeRunId` is the newest run in flight
		// (preparing/starting/running), never a `waiting` one, whose turn is over; the activity
		// status also counts `waiting`. Queued runs wait behind them (OBSERVED.md §5.6).
		const newest = (keep: (status: string) => boolean) =>
			runs.reduce<Row | undefined>(
				(best, r) =>
					keep(r.status as string) &&
					(best === undefined ||
						(r.ordinal as number) > (best.ordinal as number))
						? r
						: best,
				undefined,
			);
		const active = newest((status) => INTERRUPTIBLE.has(status));
		const activity = newest(
			(status) => BUSY_RUN_STATUSES.has(status) && status !== "queued",
		);
		const pending = thread.rows.runtimeRequests.find(
			(r) => r.status === "pending",
		);
		const messages = thread.rows.messages;
		const lastMessage = messages[messages.length - 1];
		const lastUser = [...messages].reverse().find((m) => m.role === "user");
		const items = thread.rows.turnItems;
		return {
			...clone(thread.app),
			latestRunId: latest?.id ?? null,
			latestRunRequestedAt: latest?.requestedAt ?? null,
			latestRunStartedAt: latest?.startedAt ?? null,
			latestRunCompletedAt: latest?.completedAt ?? null,
			activeRunId: active?.id ?? null,
			activityRunStatus: activity ? activity.status : null,
			status: latest ? latest.status : "idle",
			lastError: thread.lastError,
			lastErrorClass: thread.lastErrorClass,
			usageLimitResetAt: thread.usageLimitResetAt,
			pendingRuntimeRequest: pending
				? { id: pending.id, kind: pending.kind, createdAt: pending.createdAt }
				: null,
			// The newest T3: "Thread detail owns message bodies" (idx 70189692800).
			latestVisibleMessage:
				shellMessages && lastMessage
					? {
							id: lastMessage.id,
							role: lastMessage.role,
							text: lastMessage.text,
							updatedAt: lastMessage.updatedAt,
						}
					: null,
			latestUserMessageAt: lastUser?.createdAt ?? null,
			hasActionableProposedPlan: false,
			pendingBackgroundTasks: pendingBackgroundWork(thread, latest),
			itemCount: items.length,
			// A fork's visible timeline also holds what it inherited (idx 70189692800).
			visibleItemCount: visibleItemCount(threads, thread),
			updatedAt: thread.updatedAt,
		};
	}

	function projection(thread: ThreadState): Record<string, unknown> {
		const items = [...thread.rows.turnItems].sort(
			(a, b) => (a.ordinal as number) - (b.ordinal as number),
		);
		const r = thread.rows;
		return clone({
			thread: { ...thread.app, updatedAt: thread.updatedAt },
			runs: r.runs,
			attempts: r.attempts,
			nodes: r.nodes,
			subagents: [],
			providerSessions: r.providerSessions,
			providerThreads: r.providerThreads,
			providerTurns: r.providerTurns,
			runtimeRequests: r.runtimeRequests,
			messages: r.messages,
			plans: [],
			turnItems: items,
			checkpointScopes: r.checkpointScopes,
			checkpoints: r.checkpoints,
			contextHandoffs: [],
			contextTransfers: r.contextTransfers,
			visibleTurnItems: visibleTurnItems(threads, thread),
			updatedAt: thread.updatedAt,
		});
	}

	function liveThread(threadId: string): ThreadState | undefined {
		const thread = threads.get(threadId);
		if (!thread || thread.app.deletedAt || thread.app.archivedAt)
			return undefined;
		return thread;
	}

	return {
		head: () => sequence,
		events,
		projects,
		threads,
		addProject,
		createThread,
		appendThreadEvent: (thread, type, env) =>
			emit(thread, type, thread.app, env),
		upsert,
		remove(thread, collection, id, type, payload, env) {
			thread.rows[collection] = thread.rows[collection].filter(
				(r) => r.id !== id,
			);
			return emit(thread, type, payload, env);
		},
		find: (thread, collection, id) =>
			thread.rows[collection].find((r) => r.id === id),
		liveThread,
		threadShell,
		projection,
		shellSnapshot: (options) => ({
			schemaVersion: 2,
			snapshotSequence: sequence,
			projects: [...projects.values()].map((p) => clone(p.row)),
			threads:
				options?.threads === false
					? []
					: [...threads.values()]
							.filter((t) => liveThread(t.id))
							.map(threadShell),
			archivedThreads: [],
		}),
		subscribe(listener) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		wipeThreads() {
			threads.clear();
			events.length = 0;
			sequence = 0;
			for (const project of projects.values()) {
				sequence += 1;
				project.lastSequence = sequence;
				events.push({
					sequence,
					threadId: null,
					projectId: project.row.id as string,
					event: null,
				});
			}
		},
	};
}
