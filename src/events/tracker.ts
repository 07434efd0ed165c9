/**
 * Turns watched threads' shell changes into events: a run reaching a terminal status and a new
 * pending runtime request each become exactly one outbox row. The thread's observed state and
 * the rows are written in one transaction. After a reconnect or a restart the persisted state
 * is compared with the fresh shell, so what happened meanwhile still produces its events; when
 * the shell coalesced a run away (the next one started before it was seen terminal), the
 * thread's projection tells that run's outcome. Threads of projects not allowed now are not
 * evaluated at all (the thread store does not return them): their changes wait, unrecorded,
 * until they are allowed again.
 */

import type { Fleet, FleetMachine } from "../fleet/fleet.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { Db } from "../store/db.ts";
import type { DispatchStore } from "../store/dispatches.ts";
import { createGroupCommit, type GroupCommit } from "../store/group-commit.ts";
import type { Outbox } from "../store/outbox.ts";
import type { ThreadRecord, ThreadStore } from "../store/threads.ts";
import { currentAttemptOrdinal } from "../t3/derive/current-errors.ts";
import {
	capText,
	finalAssistantMessage,
	pendingQuestion,
	runError,
	runOutcome,
} from "../t3/derive/derive.ts";
import { NO_FAILURE, runFailure } from "../t3/derive/run-failure.ts";
import { startedByT3 } from "../t3/derive/run-starter.ts";
import { T3Error } from "../t3/machine-api.ts";
import {
	type Run,
	TERMINAL_RUN_STATUSES,
	type ThreadProjection,
	type ThreadShell,
} from "../t3/model.ts";
import { placeShape } from "../threads/dispatch/workspace.ts";
import { projectRef, questionShape } from "../threads/shapes.ts";
import { MISSING_STATUS, missingError } from "../threads/wait/vanish.ts";
import type { Logger } from "../util/log.ts";
import { type EventBody, eventId, type StartedBy } from "./event.ts";
import { markUnwatchedVanished } from "./unwatched-vanish.ts";

export interface TrackerDeps {
	fleet: Fleet;
	db: Db;
	threads: ThreadStore;
	dispatches: DispatchStore;
	outbox: Outbox;
	metrics: Metrics;
	log: Logger;
	now: () => number;
	/** Called after new rows were committed (wakes the delivery worker). */
	onEmitted: () => void;
	/** Where outbox rows are committed (default: a batch of its own per turn on `db`). */
	commits?: GroupCommit;
}

const MESSAGE_CAP = 4_000;
/** A failed evaluation is tried again after this long. */
const RETRY_MS = 5_000;

export interface Tracker {
	start(): void;
	stop(): void;
	/** Re-evaluates one thread now (after t3_watch or a dispatch). */
	check(threadId: string): void;
	/** Resolves when no evaluation is running (tests, shutdown). */
	idle(): Promise<void>;
}

/** The shell shows nothing an evaluation would record or report for this thread. */
function nothingToDo(record: ThreadRecord, shell: ThreadShell): boolean {
	const requestId = shell.pendingRuntimeRequest?.id ?? null;
	const changed =
		shell.latestRunId !== record.last_run_id ||
		shell.status !== record.last_status ||
		requestId !== record.last_request_id;
	if (!changed) return true;
	const needsProjection =
		TERMINAL_RUN_STATUSES.has(shell.status) ||
		(requestId !== null && requestId !== record.last_request_id) ||
		(record.last_run_id !== null && shell.latestRunId !== record.last_run_id);
	// A busy run moving between busy statuses cannot produce an event: nothing to record.
	// (Persisting every status change cost a synchronous commit per shell update.)
	return !needsProjection;
}

export function createTracker(deps: TrackerDeps): Tracker {
	const commits = deps.commits ?? createGroupCommit(deps.db);
	const unsubscribes: (() => void)[] = [];
	const running = new Map<string, { again: boolean; done: Promise<void> }>();
	/** Per watched thread, the activity (run, status, request) of the last change checked. */
	const checkedAt = new Map<string, string>();
	const retries = new Map<string, ReturnType<typeof setTimeout>>();
	let stopped = false;

	const retryLater = (threadId: string) => {
		if (stopped || retries.has(threadId)) return;
		const timer = setTimeout(() => {
			retries.delete(threadId);
			check(threadId);
		}, RETRY_MS);
		retries.set(threadId, timer);
	};

	const machineOf = (record: ThreadRecord): FleetMachine | undefined =>
		deps.fleet.get(record.machine);

	const check = (threadId: string) => {
		const state = running.get(threadId);
		if (state) {
			state.again = true;
			return;
		}
		const mine = { again: false, done: Promise.resolve() };
		mine.done = (async () => {
			do {
				mine.again = false;
				try {
					await evaluate(deps, threadId);
				} catch (error) {
					// The persisted state is untouched; look again later (a full disk, a machine
					// that dropped mid-read) even if no new shell change comes to trigger it.
					deps.log.warn("event evaluation failed; retrying", {
						threadId,
						error,
					});
					retryLater(threadId);
				}
			} while (mine.again);
			running.delete(threadId);
		})();
		running.set(threadId, mine);
	};

	const sweeps = new Set<Promise<void>>();
	const checkMachine = (name: string) => {
		const entry = deps.fleet.get(name);
		const machine = entry?.machine;
		const online = machine?.status().state === "online";
		if (entry && online) {
			const sweep = markUnwatchedVanished(deps, entry).then(
				() => {},
				(error) =>
					deps.log.warn("checking unwatched threads failed", {
						machine: name,
						error,
					}),
			);
			sweeps.add(sweep);
			void sweep.finally(() => sweeps.delete(sweep));
		}
		for (const record of deps.threads.watchedRecordsOn(name)) {
			const id = record.thread_id;
			// Thousands of threads as they were: what their evaluation would decide first, from
			// the rows at hand instead of a record read and a promise per thread.
			const shell = online ? machine?.thread(id) : undefined;
			if (shell && !running.has(id) && nothingToDo(record, shell)) continue;
			check(id);
		}
	};

	return {
		start() {
			for (const entry of deps.fleet.list()) {
				const name = entry.config.name;
				unsubscribes.push(
					entry.machine.onChange((change) => {
						// Not online (a snapshot being applied): an evaluation would stop at the state
						// check, and the catch-up at `synchronized` evaluates every watched thread.
						if (
							(change.kind === "thread" || change.kind === "thread.removed") &&
							entry.machine.status().state !== "online"
						)
							return;
						if (change.kind === "thread") {
							const id = change.thread.id;
							// Most changes only stream a message: what an evaluation decides on (run,
							// status, request) is what the last one saw, so it would find nothing.
							const key = activityKey(change.thread);
							if (checkedAt.get(id) === key) return;
							const record = deps.threads.get(id);
							if (record?.watched === 1 && record.machine === name) {
								checkedAt.set(id, key);
								check(id);
							}
						} else if (change.kind === "thread.removed") {
							checkedAt.delete(change.threadId);
							const record = deps.threads.get(change.threadId);
							if (record?.watched === 1 && record.machine === name)
								check(change.threadId);
						} else if (change.kind === "synchronized") {
							// Catch-up after (re)connect: compare persisted state with the fresh shell.
							checkedAt.clear();
							checkMachine(name);
						} else if (change.kind === "snapshot") checkedAt.clear();
					}),
				);
			}
			for (const entry of deps.fleet.list()) {
				if (entry.machine.status().state === "online")
					checkMachine(entry.config.name);
			}
		},
		stop() {
			stopped = true;
			for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
			for (const timer of retries.values()) clearTimeout(timer);
			retries.clear();
		},
		check,
		async idle() {
			while (running.size || sweeps.size)
				await Promise.all([
					...[...running.values()].map((r) => r.done),
					...sweeps,
				]);
		},
	};

	async function evaluate(deps: TrackerDeps, threadId: string): Promise<void> {
		const record = deps.threads.get(threadId);
		if (record?.watched !== 1) return;
		const entry = machineOf(record);
		if (entry?.machine.status().state !== "online") return;
		const shell = entry.machine.thread(threadId);
		if (!shell) {
			await forgetIfGone(deps, entry, record);
			return;
		}
		if (nothingToDo(record, shell)) return;
		// Only runs after the baseline make events: a followed window of the latest turns does.
		const { projection } = await entry.machine.getThread(threadId, {
			covers: (p) => coversAfter(p, record.baseline_ordinal),
		});
		// Deleted: what T3 answers 404 for; a followed stream may show it first (vanish.ts).
		if (projection.thread.deletedAt) {
			reportVanished(deps, entry, record);
			return;
		}
		const project = deps.fleet.project(entry, projection.thread.projectId);
		// Its project is not allowed now: leave the record as it is (hidden threads never reach
		// here through the store's reads), so if it is allowed again the catch-up reports what
		// happened meanwhile.
		if (!project) return;
		// The commit (FULL: an fsync, blocking the thread) joins this turn's batch and runs after
		// it: a t3_wait woken by the same change answers first (its reply is already on its way,
		// where it used to wait for the fsync: wake from the outcome frame p50 ~6 → ~3 ms), and
		// outcomes arriving together share one fsync instead of queueing behind one each.
		const emitted = await commits.run(() => {
			const fresh = deps.threads.get(threadId);
			if (fresh?.watched !== 1) return 0;
			const bodies = transitions(
				deps,
				entry,
				fresh,
				shell,
				projection,
				project,
			);
			for (const body of bodies) {
				deps.outbox.insert({
					id: body.id,
					thread_id: threadId,
					thread_seq: body.thread_seq,
					dedupe_key: body.dedupe,
					type: body.event.type,
					origin: body.event.origin,
					body: JSON.stringify(body.event),
					created_at: deps.now(),
				});
			}
			deps.threads.observe(threadId, seen(shell), deps.now());
			deps.threads.setBaseline(
				threadId,
				watermark(projection, fresh.baseline_ordinal),
			);
			return bodies.length;
		});
		if (emitted) {
			deps.metrics.inc("t3code_mcp_events_emitted_total", {}, emitted);
			deps.onEmitted();
		}
	}
}

function activityKey(shell: ThreadShell): string {
	return `${shell.latestRunId}\u0000${shell.status}\u0000${shell.pendingRuntimeRequest?.id ?? ""}`;
}

function seen(shell: ThreadShell) {
	return {
		runId: shell.latestRunId,
		status: shell.status,
		requestId: shell.pendingRuntimeRequest?.id ?? null,
		title: shell.title,
	};
}

/** The events this projection shows that were not emitted yet, in the order they happened. */
function transitions(
	deps: TrackerDeps,
	entry: FleetMachine,
	record: ThreadRecord,
	shell: ThreadShell,
	projection: ThreadProjection,
	project: Parameters<typeof projectRef>[0],
): { id: string; dedupe: string; thread_seq: number; event: EventBody }[] {
	const out: {
		id: string;
		dedupe: string;
		thread_seq: number;
		event: EventBody;
	}[] = [];
	const dispatchOf = (runId: string, userMessageId: string | null) =>
		deps.dispatches.byRunId(runId) ??
		(userMessageId ? deps.dispatches.byMessageId(userMessageId) : undefined);
	const originOf = (runId: string, userMessageId: string | null) =>
		dispatchOf(runId, userMessageId)?.origin ?? record.origin;
	const startedBy = (run: Run): StartedBy =>
		dispatchOf(run.id, run.userMessageId)
			? "connector"
			: startedByT3(projection, run)
				? "t3"
				: "user";
	const base = (
		runId: string | null,
		runStatus: string | null,
		origin: string | null,
	) => ({
		machine: entry.config.name,
		thread_id: record.thread_id,
		project: projectRef(project),
		title: shell.title,
		run_id: runId,
		run_status: runStatus,
		origin,
		...placeShape({
			branch: shell.branch ?? projection.thread.branch,
			worktreePath: shell.worktreePath ?? projection.thread.worktreePath,
		}),
	});
	const push = (
		dedupe: string,
		build: (id: string, seq: number) => EventBody,
	) => {
		if (deps.outbox.has(record.thread_id, dedupe)) return;
		const id = eventId();
		const seq = deps.threads.nextSeq(record.thread_id);
		out.push({ id, dedupe, thread_seq: seq, event: build(id, seq) });
	};

	const runs = [...projection.runs].sort((a, b) => a.ordinal - b.ordinal);
	const question = pendingQuestion(
		projection,
		shell.pendingRuntimeRequest ?? null,
		{ machine: entry.config.name },
	);
	const questionRun = question
		? (runs.find((r) => r.id === shell.activeRunId) ?? runs.at(-1))
		: undefined;
	for (const run of runs) {
		if (run.ordinal <= record.baseline_ordinal) continue;
		const outcome = runOutcome(run.status);
		if (!outcome) continue;
		const message = finalAssistantMessage(projection, run.id);
		const failure =
			outcome === "failed" ? runFailure(projection, run.id, shell) : NO_FAILURE;
		// A failed preparation may be retried (t3_manage retry_preparation: the same run runs
		// again), so it has a key of its own and the retried run's outcome is reported too; a
		// retry that fails preparing again is a new attempt (the first keeps the older key).
		const attempt = currentAttemptOrdinal(projection, run);
		const dedupe =
			failure.error_class === "workspace_preparation"
				? `run:${run.id}:preparation${attempt > 1 ? `:${attempt}` : ""}`
				: `run:${run.id}`;
		push(dedupe, (id, seq) => ({
			id,
			type: `thread.${outcome}`,
			occurred_at: run.completedAt ?? new Date(deps.now()).toISOString(),
			...base(run.id, run.status, originOf(run.id, run.userMessageId)),
			thread_seq: seq,
			message: message === null ? null : capText(message, MESSAGE_CAP),
			error: outcome === "completed" ? null : runError(projection, run.id),
			question: null,
			...failure,
			started_by: startedBy(run),
		}));
	}
	if (question) {
		const createdAt =
			shell.pendingRuntimeRequest?.id === question.request_id
				? shell.pendingRuntimeRequest.createdAt
				: undefined;
		push(`request:${question.request_id}`, (id, seq) => ({
			id,
			type: "thread.question",
			occurred_at: createdAt ?? new Date(deps.now()).toISOString(),
			...base(
				questionRun?.id ?? null,
				questionRun?.status ?? null,
				questionRun
					? originOf(questionRun.id, questionRun.userMessageId)
					: record.origin,
			),
			thread_seq: seq,
			message: null,
			error: null,
			question: questionShape(question),
			...NO_FAILURE,
			started_by: questionRun ? startedBy(questionRun) : null,
		}));
	}
	return out;
}

/** Every run after `baseline` is in the projection (a window of the latest runs, or all). */
function coversAfter(projection: ThreadProjection, baseline: number): boolean {
	let oldest = Number.POSITIVE_INFINITY;
	for (const run of projection.runs) oldest = Math.min(oldest, run.ordinal);
	return oldest <= baseline + 1;
}

/** Highest ordinal up to which every run is terminal: older runs can never produce events again. */
function watermark(projection: ThreadProjection, current: number): number {
	let mark = current;
	for (const run of [...projection.runs].sort(
		(a, b) => a.ordinal - b.ordinal,
	)) {
		if (run.ordinal <= mark) continue;
		if (run.ordinal !== mark + 1 || !TERMINAL_RUN_STATUSES.has(run.status))
			break;
		mark = run.ordinal;
	}
	return mark;
}

/** A watched thread that left the shell: stop watching it if T3 no longer has it. */
async function forgetIfGone(
	deps: TrackerDeps,
	entry: FleetMachine,
	record: ThreadRecord,
): Promise<void> {
	// A dispatch not yet confirmed by T3 (its launch may still be on the way, or retried after
	// a lost reply) is not gone: the shell simply has not listed it yet.
	if (deps.dispatches.latestForThread(record.thread_id)?.run_id === null)
		return;
	try {
		const { projection } = await entry.machine.getThread(record.thread_id);
		if (projection.thread.deletedAt) {
			reportVanished(deps, entry, record);
			return;
		}
		// Archived: nothing more will happen to it; stop watching quietly. Otherwise the shell
		// simply has not listed it yet (a dispatch racing a reconnect): keep watching.
		if (projection.thread.archivedAt) {
			deps.threads.setWatched(
				record.thread_id,
				false,
				record.origin,
				deps.now(),
			);
			deps.log.info("stopped watching an archived thread", {
				threadId: record.thread_id,
			});
		}
	} catch (error) {
		if (error instanceof T3Error && error.code === "NOT_FOUND") {
			reportVanished(deps, entry, record);
			return;
		}
		throw error;
	}
}

/**
 * T3 answers 404 for a watched thread: it vanished (deleted elsewhere, or the server lost its
 * state; our own t3_delete unwatches first, so it never gets here). One `thread.failed` event
 * with run_status "missing", then the thread is no longer watched.
 */
function reportVanished(
	deps: TrackerDeps,
	entry: FleetMachine,
	record: ThreadRecord,
): void {
	const threadId = record.thread_id;
	const project = deps.fleet.project(entry, record.project_id);
	// A project the machine still lists but the allowlist hides: its threads do not exist for us.
	const hidden =
		!project &&
		entry.machine.projects().some((p) => p.id === record.project_id);
	const emitted = deps.db.transaction(() => {
		const fresh = deps.threads.get(threadId);
		if (fresh?.watched !== 1) return 0;
		deps.threads.markMissing(threadId, deps.now());
		if (hidden || deps.outbox.has(threadId, "missing")) return 0;
		const id = eventId();
		const seq = deps.threads.nextSeq(threadId);
		const event: EventBody = {
			id,
			type: "thread.failed",
			occurred_at: new Date(deps.now()).toISOString(),
			machine: entry.config.name,
			thread_id: threadId,
			// A server that lost its state may have lost the project too: then only its id is known.
			project: project
				? projectRef(project)
				: { id: record.project_id, title: "", path: "" },
			title: fresh.title,
			run_id: null,
			run_status: MISSING_STATUS,
			origin: fresh.origin,
			thread_seq: seq,
			message: null,
			error: missingError(threadId, entry.config.name),
			question: null,
			...NO_FAILURE,
			started_by: null,
			branch: null,
			worktree_path: null,
		};
		deps.outbox.insert({
			id,
			thread_id: threadId,
			thread_seq: seq,
			dedupe_key: "missing",
			type: event.type,
			origin: event.origin,
			body: JSON.stringify(event),
			created_at: deps.now(),
		});
		return 1;
	})();
	deps.log.info("a watched thread vanished from its machine", {
		threadId,
		machine: entry.config.name,
	});
	if (emitted) {
		deps.metrics.inc("t3code_mcp_events_emitted_total", {}, emitted);
		deps.onEmitted();
	}
}
