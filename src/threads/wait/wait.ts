/**
 * Room `threads/wait/`: waiting on threads and following them (`t3_wait`, `t3_watch`), and what a
 * wait says when a thread vanished or its machine is offline. May import `t3/`, `fleet/` types and
 * the `threads/` root (deps, errors, locate); never `mcp/`, `tools/`, `http/` or `cli/`.
 */
/**
 * `t3_wait`: event-driven waiting on one or several threads. It subscribes to the machines'
 * shell changes before the first look, so no transition can slip between the two; it reads a
 * thread's projection only when the shell says something that matters may have happened.
 * A timeout, a client that goes away or a shutdown never touches the run itself; a timeout still
 * reports what had already happened (even `timeout: 0`). A run held in a held queue and a thread
 * that vanished from its machine settle at once (queue.ts, vanish.ts).
 */
import {
	capText,
	finalAssistantMessage,
	findRunByMessageId,
	latestRun,
	type PendingQuestionView,
	pendingQuestion,
	runError,
	runOutcome,
} from "../../t3/derive/derive.ts";
import {
	NO_FAILURE,
	type RunFailure,
	runFailure,
} from "../../t3/derive/run-failure.ts";
import { T3Error } from "../../t3/machine-api.ts";
import {
	type Run,
	TERMINAL_RUN_STATUSES,
	type ThreadProjection,
} from "../../t3/model.ts";
import { systemClock } from "../../util/clock.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { type LocatedThread, locateThread } from "../locate.ts";
import { type QuestionShape, questionShape } from "../shapes.ts";
import { heldOf, waitThroughHold } from "./held-wait.ts";
import { offlineNote } from "./offline-note.ts";
import { statusLine } from "./progress.ts";
import {
	isNotFound,
	isOwnDelete,
	MISSING_STATUS,
	missingError,
	removedMachineError,
	vanishedFrom,
} from "./vanish.ts";

export type WaitOutcome =
	| "completed"
	| "interrupted"
	| "failed"
	| "question"
	| "timeout";

export type WaitResult = {
	thread_id: string;
	outcome: WaitOutcome;
	run_id: string | null;
	run_status: string | null;
	message: string | null;
	error: string | null;
	question: QuestionShape | null;
	elapsed_s: number;
	/** A timeout while the thread's machine is not online: its state and why (nothing reaches us). */
	machine_state?: string;
	reason?: string | null;
} & RunFailure;

/**
 * A wait result plus lines for the caller that are not part of the result's shape: a note, and
 * on a timeout how the run stands now (progress.ts).
 */
export type WaitReport = WaitResult & { note?: string; progress?: string };
export type Settled = Omit<WaitReport, "elapsed_s">;

export const MESSAGE_CAP = 8_000;
/** After a failed read, how soon a wait looks again. */
const RETRY_MS = 2_000;
/** How long a timeout waits for a first look still in flight (a slow read) before it answers. */
const FIRST_LOOK_GRACE_MS = 5_000;

export interface WaitOptions {
	timeoutS: number;
	signal?: AbortSignal;
	progress?: (message: string) => Promise<void>;
}

let waitsInProgress = 0;
/** For /metrics. */
export const activeWaits = () => waitsInProgress;

export function waitForThreads(
	deps: ThreadDeps,
	threadIds: string[],
	options: WaitOptions,
): Promise<WaitReport> {
	// A held dispatch is waited on through its hold (held-wait.ts).
	if (deps.holding && threadIds.some((id) => heldOf(deps, id)))
		return waitThroughHold(deps, threadIds, options, (ids, o) =>
			waitStarted(deps, ids, o),
		);
	return waitStarted(deps, threadIds, options);
}

async function waitStarted(
	deps: ThreadDeps,
	threadIds: string[],
	options: WaitOptions,
): Promise<WaitReport> {
	const started = deps.now();
	const clock = deps.clock ?? systemClock;
	const elapsed = () => Math.round((deps.now() - started) / 100) / 10;
	const looked = await Promise.all(
		threadIds.map((id) => locateOrGone(deps, id)),
	);
	const gone = looked.find((l): l is Settled => "outcome" in l);
	if (gone) return { ...gone, elapsed_s: elapsed() };
	const located = looked as LocatedThread[];
	const byId = new Map(located.map((l) => [l.threadId, l]));

	return new Promise<WaitReport>((resolve, reject) => {
		let done = false;
		const cleanups: (() => void)[] = [];
		const inFlight = new Map<string, { again: boolean; done: Promise<void> }>();
		/** Unanswerable requests this wait saw again (reported by an earlier wait): the timeout names them. */
		const stillPending = new Map<string, PendingQuestionView>();
		waitsInProgress++;

		const settle = (end: () => void) => {
			if (done) return;
			done = true;
			waitsInProgress--;
			for (const cleanup of cleanups) cleanup();
			end();
		};
		const finish = (result: WaitReport) => settle(() => resolve(result));

		const timeoutResult = (): WaitReport => {
			const report = timeoutReport(
				deps,
				located[0] as LocatedThread,
				elapsed(),
			);
			const pending = [...stillPending.entries()];
			const notes = pending.map(
				([threadId, q]) =>
					`Thread "${threadId}": request ${q.request_id} (${q.kind}) is still pending and cannot be answered here: ${q.reason} Waiting again only helps after that.`,
			);
			const offline = offlineNote(
				located.map((l) => l.entry),
				deps.now(),
			);
			if (offline) notes.push(offline);
			if (notes.length === 0) return report;
			return { ...report, note: notes.join("\n") };
		};

		/** Looks at a thread now (or again after the look in flight); resolves when that look ended. */
		const check = (threadId: string): Promise<void> => {
			if (done) return Promise.resolve();
			const state = inFlight.get(threadId);
			if (state) {
				state.again = true;
				return state.done;
			}
			const mine = { again: false, done: Promise.resolve() };
			inFlight.set(threadId, mine);
			mine.done = (async () => {
				do {
					mine.again = false;
					const loc = byId.get(threadId) as LocatedThread;
					try {
						const settled = await evaluate(deps, loc, stillPending);
						if (settled) finish({ ...settled, elapsed_s: elapsed() });
					} catch (error) {
						if (isNotFound(error)) {
							// T3 no longer has the thread: it vanished, unless we deleted it ourselves.
							if (isOwnDelete(threadId))
								settle(() =>
									reject(
										new ThreadError(
											`Thread "${threadId}" was deleted with t3_delete while waiting on it.`,
										),
									),
								);
							else
								finish({
									...missingResult(threadId, loc.entry.config.name),
									elapsed_s: elapsed(),
								});
							break;
						}
						// A failed read (timeout, 5xx, a drop) is looked at again shortly even if no
						// further shell change comes: the run may already be over.
						deps.log.debug("wait: evaluation failed", { threadId, error });
						cleanups.push(clock.setTimer(() => check(threadId), RETRY_MS));
					}
				} while (mine.again && !done);
				inFlight.delete(threadId);
			})();
			return mine.done;
		};

		// Follow each thread on its own stream while waiting (src/t3/follow/thread-follow.ts).
		for (const l of located) {
			const release = l.entry.machine.follow?.(l.threadId);
			if (release) cleanups.push(release);
		}

		for (const entry of new Set(located.map((l) => l.entry))) {
			cleanups.push(
				entry.machine.onChange((change) => {
					if (change.kind === "thread") {
						if (byId.has(change.thread.id)) check(change.thread.id);
					} else if (change.kind === "thread.removed") {
						if (byId.has(change.threadId)) check(change.threadId);
					} else if (
						change.kind === "snapshot" ||
						change.kind === "synchronized"
					) {
						for (const l of located) if (l.entry === entry) check(l.threadId);
					} else if (change.kind === "removed") {
						const l = located.find((l) => l.entry === entry) as LocatedThread;
						finish({
							...removedResult(l.threadId, entry.config.name),
							elapsed_s: elapsed(),
						});
					}
				}),
			);
		}

		const firstLook = Promise.all(located.map((l) => check(l.threadId)));
		// A timeout reports what already happened: it lets the first look end (within a bound, so
		// a frozen machine cannot stretch a short timeout).
		const timedOut = () => {
			void firstLook.then(() => finish(timeoutResult()));
			cleanups.push(
				clock.setTimer(() => finish(timeoutResult()), FIRST_LOOK_GRACE_MS),
			);
		};
		// `timeout: 0` just looks: no timer, so it answers under any clock.
		if (options.timeoutS <= 0) timedOut();
		else cleanups.push(clock.setTimer(timedOut, options.timeoutS * 1000));

		for (const signal of [options.signal, deps.shutdown]) {
			if (!signal) continue;
			const onAbort = () => finish(timeoutResult());
			if (signal.aborted) queueMicrotask(onAbort);
			signal.addEventListener("abort", onAbort, { once: true });
			cleanups.push(() => signal.removeEventListener("abort", onAbort));
		}

		if (options.progress) {
			const report = options.progress;
			const tick = () => {
				if (done) return;
				report(
					progressLine(deps, located[0] as LocatedThread, elapsed()),
				).catch(() => {});
			};
			// Re-armed after each tick: one timer per wait, through the injectable clock.
			const every = deps.progressIntervalMs ?? 10_000;
			let cancelTick = () => {};
			const again = () => {
				tick();
				if (!done) cancelTick = clock.setTimer(again, every);
			};
			again();
			cleanups.push(() => cancelTick());
		}
	});
}

/** What a wait that timed out reports: the first thread's run as it stands. */
export function timeoutReport(
	deps: ThreadDeps,
	first: Pick<LocatedThread, "entry" | "threadId">,
	elapsedS: number,
): WaitReport {
	const shell = first.entry.machine.thread(first.threadId);
	const status = first.entry.machine.status();
	return {
		...(status.state === "online"
			? {}
			: { machine_state: status.state, reason: status.reason }),
		thread_id: first.threadId,
		outcome: "timeout",
		run_id:
			deps.dispatches.latestForThread(first.threadId)?.run_id ??
			shell?.latestRunId ??
			null,
		run_status: shell?.status ?? null,
		message: null,
		error: null,
		question: null,
		...NO_FAILURE,
		elapsed_s: elapsedS,
		progress: progressLine(deps, first, elapsedS),
	};
}

/** The progress line of a wait on `first`: about the run we dispatched there, if we did. */
function progressLine(
	deps: ThreadDeps,
	first: Pick<LocatedThread, "entry" | "threadId">,
	waitedS: number,
): string {
	return statusLine(first, {
		now: deps.now(),
		waitedS,
		runId: deps.dispatches.latestForThread(first.threadId)?.run_id ?? null,
	});
}

/** Thread → the unanswerable request a wait last reported for it (bounded: recent ones matter). */
const reportedUnanswerable = new Map<string, string>();

function rememberUnanswerable(threadId: string, requestId: string): void {
	reportedUnanswerable.delete(threadId);
	reportedUnanswerable.set(threadId, requestId);
	if (reportedUnanswerable.size > 1_000)
		reportedUnanswerable.delete(
			reportedUnanswerable.keys().next().value as string,
		);
}

/** The result of a wait on a thread that vanished from its machine (vanish.ts). */
export function missingResult(threadId: string, machine: string): Settled {
	return {
		thread_id: threadId,
		outcome: "failed",
		run_id: null,
		run_status: MISSING_STATUS,
		message: null,
		error: missingError(threadId, machine),
		question: null,
		...NO_FAILURE,
	};
}

/** The result of a wait whose machine left the config (a reload): failed, nothing to follow. */
export function removedResult(threadId: string, machine: string): Settled {
	return {
		...missingResult(threadId, machine),
		error: removedMachineError(threadId, machine),
	};
}

/** Finds the thread; one we track that its machine answers 404 for has settled as missing. */
export async function locateOrGone(
	deps: ThreadDeps,
	threadId: string,
): Promise<LocatedThread | Settled> {
	try {
		return await locateThread(deps, threadId);
	} catch (error) {
		if (!(error instanceof ThreadError)) throw error;
		const gone = await vanishedFrom(deps, threadId);
		if (gone) return missingResult(threadId, gone.config.name);
		throw error;
	}
}

/**
 * A follow-up cancelled before it started (t3_manage cancel_queued) ends nothing: the wait is
 * then about the thread's latest run that did or will run, so it does not return at once.
 */
function ranOrWillRun(projection: ThreadProjection, run: Run): Run {
	const dropped = (r: Run) => r.status === "cancelled" && !r.startedAt;
	if (!dropped(run)) return run;
	let best: Run | null = null;
	for (const r of projection.runs)
		if (!dropped(r) && (!best || r.ordinal > best.ordinal)) best = r;
	return best ?? run;
}

/** The settled state of the run this wait is about, or null while it is still going. */
export async function evaluate(
	deps: ThreadDeps,
	loc: LocatedThread,
	stillPending?: Map<string, PendingQuestionView>,
): Promise<Settled | null> {
	const shell = loc.entry.machine.thread(loc.threadId);
	const dispatch = deps.dispatches.latestForThread(loc.threadId);
	const target = dispatch?.run_id ?? null;
	// Nothing can have settled while the shell shows the run still busy with no request
	// pending: ours (by run id), or the latest one when we did not dispatch it. A queue with
	// nothing running may be held, which only the projection tells.
	if (
		shell &&
		!(shell.status === "queued" && shell.activeRunId === null) &&
		(target === null ? !dispatch : shell.latestRunId === target) &&
		shell.latestRunId !== null &&
		shell.pendingRuntimeRequest === null &&
		!TERMINAL_RUN_STATUSES.has(shell.status) &&
		shell.status !== "idle"
	) {
		return null;
	}
	// The run waited on is among the latest: a followed window of the latest turns answers.
	const { projection } = await loc.entry.machine.getThread(loc.threadId, {
		covers: (p) =>
			dispatch ? findRunByMessageId(p, dispatch.message_id) !== null : true,
	});
	// Deleted: what T3 answers 404 for; a followed stream may show it first (vanish.ts).
	if (projection.thread.deletedAt)
		throw new T3Error("NOT_FOUND", `thread ${loc.threadId} was deleted`);
	let run = dispatch
		? findRunByMessageId(projection, dispatch.message_id)
		: latestRun(projection);
	if (!run) return null;
	if (dispatch && dispatch.run_id !== run.id) {
		deps.dispatches.setRun(
			dispatch.command_id,
			run.id,
			run.status,
			run.status === "queued",
		);
	}
	run = ranOrWillRun(projection, run);
	if (run.status === "queued" && run.queueHeld === true) {
		return {
			thread_id: loc.threadId,
			outcome: "timeout",
			run_id: run.id,
			run_status: run.status,
			message: null,
			error: null,
			question: null,
			...NO_FAILURE,
			note: `Run ${run.id} is queued and its queue is held (interrupt or server restart): it will not start until t3_manage with action "resume_queue". Waiting longer would not change that.`,
		};
	}
	const outcome = runOutcome(run.status);
	if (outcome) {
		const message = finalAssistantMessage(projection, run.id);
		const failure =
			outcome === "failed" ? runFailure(projection, run.id, shell) : NO_FAILURE;
		const note = limitNote(failure);
		return {
			thread_id: loc.threadId,
			outcome,
			run_id: run.id,
			run_status: run.status,
			message: message === null ? null : capText(message, MESSAGE_CAP),
			error: outcome === "completed" ? null : runError(projection, run.id),
			question: null,
			...failure,
			...(note ? { note } : {}),
		};
	}
	const question = pendingQuestion(
		projection,
		shell?.pendingRuntimeRequest ??
			projection.thread.pendingRuntimeRequest ??
			null,
		{ machine: loc.entry.config.name },
	);
	if (question && !question.answerable) {
		// Reported once per thread: a wait after that waits for a change instead of answering the
		// same request again at once, so an agent never loops on what only a person can resolve.
		if (reportedUnanswerable.get(loc.threadId) === question.request_id) {
			stillPending?.set(loc.threadId, question);
			return null;
		}
		rememberUnanswerable(loc.threadId, question.request_id);
	}
	stillPending?.delete(loc.threadId);
	if (question) {
		return {
			thread_id: loc.threadId,
			outcome: "question",
			run_id: run.id,
			run_status: run.status,
			message: null,
			error: null,
			question: questionShape(question),
			...NO_FAILURE,
		};
	}
	return null;
}

/** What to do after a usage limit: T3 may resume by itself; a new prompt before the reset fails again. */
function limitNote(failure: RunFailure): string | undefined {
	if (failure.error_class !== "usage_limit") return undefined;
	const when = failure.reset_at ? `at ${failure.reset_at}` : "later";
	return failure.auto_resume
		? `The provider's usage limit was reached; it resets ${when}, and T3 then resumes this thread by itself (a run of its own: events say started_by "t3").`
		: `The provider's usage limit was reached; it resets ${when}. Dispatch again after that: before it, a new run fails the same way.`;
}
