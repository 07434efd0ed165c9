/**
 * Waiting through a hold (CONTRACT.md "One pool", "Holding"): a wait on a held dispatch's thread
 * waits until it starts (then for its run, as any wait), and settles at once when it was
 * withdrawn (`interrupted`, run_status `withdrawn`) or never started (`failed`, `never_started`).
 * A timeout while it is still held reports `run_status: "held"`. Tasks use `heldSettled` alike.
 */
import type { HeldHead } from "../../store/held-store.ts";
import { NO_FAILURE } from "../../t3/derive/run-failure.ts";
import { systemClock } from "../../util/clock.ts";
import type { ThreadDeps } from "../deps.ts";
import { heldOf } from "../locate.ts";
import type { Settled, WaitOptions, WaitReport } from "./wait.ts";

export { heldOf };

const ended = (head: HeldHead): Settled | undefined => {
	if (head.status === "withdrawn")
		return {
			thread_id: head.thread_id,
			outcome: "interrupted",
			run_id: null,
			run_status: "withdrawn",
			message: null,
			error: null,
			question: null,
			...NO_FAILURE,
		};
	if (head.status === "never_started")
		return {
			thread_id: head.thread_id,
			outcome: "failed",
			run_id: null,
			run_status: "never_started",
			message: null,
			error: `The held dispatch never started: ${head.error ?? "unknown"}`,
			question: null,
			...NO_FAILURE,
		};
	return undefined;
};

/**
 * A held thread as a wait sees it: settled (withdrawn, never started), "pending" while held or
 * starting, undefined when it is no held dispatch of the caller's (or has started).
 */
export function heldSettled(
	deps: ThreadDeps,
	threadId: string,
): Settled | "pending" | undefined {
	const head = heldOf(deps, threadId);
	if (!head) return undefined;
	return ended(head) ?? "pending";
}

/** What a wait that timed out on a held dispatch says. */
function heldTimeout(
	deps: ThreadDeps,
	head: HeldHead,
	elapsedS: number,
): WaitReport {
	const shape = deps.holding?.isOpen(head.thread_id)
		? deps.holding.shape(head)
		: undefined;
	return {
		thread_id: head.thread_id,
		outcome: "timeout",
		run_id: null,
		run_status: "held",
		message: null,
		error: null,
		question: null,
		...NO_FAILURE,
		elapsed_s: elapsedS,
		...(shape
			? {
					// Not a note: a note makes a timeout final (a task would end on it).
					progress: `Thread "${head.thread_id}" is held (position ${shape.position}, ${shape.reason}: ${shape.detail}); it starts when a machine has room.`,
				}
			: {}),
	};
}

/**
 * Waits on threads of which some are held: until a held one ends (withdrawn or never started:
 * settled), starts (then waited on with the rest), or one of the others settles.
 */
export async function waitThroughHold(
	deps: ThreadDeps,
	threadIds: string[],
	options: WaitOptions,
	waitStarted: (ids: string[], options: WaitOptions) => Promise<WaitReport>,
): Promise<WaitReport> {
	const clock = deps.clock ?? systemClock;
	const began = deps.now();
	const elapsed = () => Math.round((deps.now() - began) / 100) / 10;
	const left = () => options.timeoutS - (deps.now() - began) / 1000;
	for (;;) {
		const pending: HeldHead[] = [];
		for (const id of threadIds) {
			const head = heldOf(deps, id);
			if (!head) continue;
			const settled = ended(head);
			if (settled) return { ...settled, elapsed_s: elapsed() };
			pending.push(head);
		}
		if (pending.length === 0)
			return waitStarted(threadIds, {
				...options,
				timeoutS: Math.max(0, left()),
			});
		const first = pending[0] as HeldHead;
		if (left() <= 0 || options.signal?.aborted || deps.shutdown?.aborted)
			return heldTimeout(deps, first, elapsed());
		const others = threadIds.filter(
			(id) => !pending.some((h) => h.thread_id === id),
		);
		const stop = new AbortController();
		const cleanups: (() => void)[] = [];
		const outcome = await new Promise<
			"held" | "timeout" | { report: WaitReport }
		>((resolve) => {
			const ids = new Set(pending.map((h) => h.thread_id));
			const unsubscribe = deps.holding?.onEnd((id) => {
				if (ids.has(id)) resolve("held");
			});
			if (unsubscribe) cleanups.push(unsubscribe);
			cleanups.push(clock.setTimer(() => resolve("timeout"), left() * 1000));
			for (const signal of [options.signal, deps.shutdown]) {
				if (!signal) continue;
				const onAbort = () => resolve("timeout");
				signal.addEventListener("abort", onAbort, { once: true });
				cleanups.push(() => signal.removeEventListener("abort", onAbort));
			}
			if (others.length > 0)
				waitStarted(others, {
					timeoutS: Math.max(0, left()),
					signal: stop.signal,
					progress: options.progress,
				}).then(
					(report) => {
						if (!stop.signal.aborted && report.outcome !== "timeout")
							resolve({ report });
					},
					() => {},
				);
		});
		stop.abort();
		for (const cleanup of cleanups) cleanup();
		if (outcome === "timeout") return heldTimeout(deps, first, elapsed());
		if (outcome !== "held") return { ...outcome.report, elapsed_s: elapsed() };
	}
}
