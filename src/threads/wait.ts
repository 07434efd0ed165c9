/**
 * `t3_wait`: event-driven waiting on one or several threads. It subscribes to the machines'
 * shell changes before the first look, so no transition can slip between the two; it reads a
 * thread's projection only when the shell says something that matters may have happened.
 * A timeout, a client that goes away or a shutdown never touches the run itself.
 */
import {
	capText,
	finalAssistantMessage,
	findRunByMessageId,
	latestRun,
	pendingQuestion,
	runError,
	runOutcome,
} from "../t3/derive.ts";
import { TERMINAL_RUN_STATUSES } from "../t3/model.ts";
import type { ThreadDeps } from "./deps.ts";
import { type LocatedThread, locateThread } from "./locate.ts";
import { type QuestionShape, questionShape } from "./shapes.ts";

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
};

export const MESSAGE_CAP = 8_000;
/** After a failed read, how soon a wait looks again. */
const RETRY_MS = 2_000;

export interface WaitOptions {
	timeoutS: number;
	signal?: AbortSignal;
	progress?: (message: string) => Promise<void>;
}

let waitsInProgress = 0;
/** For /metrics. */
export const activeWaits = () => waitsInProgress;

export async function waitForThreads(
	deps: ThreadDeps,
	threadIds: string[],
	options: WaitOptions,
): Promise<WaitResult> {
	const started = deps.now();
	const located = await Promise.all(
		threadIds.map((id) => locateThread(deps, id)),
	);
	const byId = new Map(located.map((l) => [l.threadId, l]));
	const elapsed = () => Math.round((deps.now() - started) / 100) / 10;

	return new Promise<WaitResult>((resolve) => {
		let done = false;
		const cleanups: (() => void)[] = [];
		const inFlight = new Map<string, { again: boolean }>();
		waitsInProgress++;

		const finish = (result: WaitResult) => {
			if (done) return;
			done = true;
			waitsInProgress--;
			for (const cleanup of cleanups) cleanup();
			resolve(result);
		};

		const timeoutResult = (): WaitResult => {
			const first = located[0] as LocatedThread;
			const shell = first.entry.machine.thread(first.threadId);
			return {
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
				elapsed_s: elapsed(),
			};
		};

		const check = (threadId: string) => {
			if (done) return;
			const state = inFlight.get(threadId);
			if (state) {
				state.again = true;
				return;
			}
			const mine = { again: false };
			inFlight.set(threadId, mine);
			void (async () => {
				do {
					mine.again = false;
					const loc = byId.get(threadId) as LocatedThread;
					try {
						const settled = await evaluate(deps, loc);
						if (settled) finish({ ...settled, elapsed_s: elapsed() });
					} catch (error) {
						// A failed read (timeout, 5xx, a drop) is looked at again shortly even if no
						// further shell change comes: the run may already be over.
						deps.log.debug("wait: evaluation failed", { threadId, error });
						const retry = setTimeout(() => check(threadId), RETRY_MS);
						cleanups.push(() => clearTimeout(retry));
					}
				} while (mine.again && !done);
				inFlight.delete(threadId);
			})();
		};

		// Follow each thread on its own stream while waiting (src/t3/thread-follow.ts).
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
					}
				}),
			);
		}

		const timer = setTimeout(
			() => finish(timeoutResult()),
			options.timeoutS * 1000,
		);
		cleanups.push(() => clearTimeout(timer));

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
				const first = located[0] as LocatedThread;
				const shell = first.entry.machine.thread(first.threadId);
				const last = shell?.latestVisibleMessage?.text?.split("\n")[0] ?? "";
				const line = `${shell?.status ?? "unknown"}, ${Math.round(elapsed())} s elapsed${last ? `; latest: ${capText(last, 120)}` : ""}`;
				report(line).catch(() => {});
			};
			tick();
			const interval = setInterval(tick, deps.progressIntervalMs ?? 10_000);
			cleanups.push(() => clearInterval(interval));
		}

		for (const l of located) check(l.threadId);
	});
}

/** The settled state of the run this wait is about, or null while it is still going. */
async function evaluate(
	deps: ThreadDeps,
	loc: LocatedThread,
): Promise<Omit<WaitResult, "elapsed_s"> | null> {
	const shell = loc.entry.machine.thread(loc.threadId);
	const dispatch = deps.dispatches.latestForThread(loc.threadId);
	const target = dispatch?.run_id ?? null;
	// Nothing can have settled while the shell shows the run still busy with no request
	// pending: ours (by run id), or the latest one when we did not dispatch it.
	if (
		shell &&
		(target === null ? !dispatch : shell.latestRunId === target) &&
		shell.latestRunId !== null &&
		shell.pendingRuntimeRequest === null &&
		!TERMINAL_RUN_STATUSES.has(shell.status) &&
		shell.status !== "idle"
	) {
		return null;
	}
	const { projection } = await loc.entry.machine.getThread(loc.threadId);
	const run = dispatch
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
	const outcome = runOutcome(run.status);
	if (outcome) {
		const message = finalAssistantMessage(projection, run.id);
		return {
			thread_id: loc.threadId,
			outcome,
			run_id: run.id,
			run_status: run.status,
			message: message === null ? null : capText(message, MESSAGE_CAP),
			error: outcome === "completed" ? null : runError(projection, run.id),
			question: null,
		};
	}
	const question = pendingQuestion(
		projection,
		shell?.pendingRuntimeRequest ??
			projection.thread.pendingRuntimeRequest ??
			null,
	);
	if (question) {
		return {
			thread_id: loc.threadId,
			outcome: "question",
			run_id: run.id,
			run_status: run.status,
			message: null,
			error: null,
			question: questionShape(question),
		};
	}
	return null;
}
