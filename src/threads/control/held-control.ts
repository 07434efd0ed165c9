/**
 * `t3_interrupt` and `t3_delete` on a held dispatch (CONTRACT.md "One pool", "Holding"):
 * interrupting withdraws it (it never starts; `t3_wait` then says interrupted, `withdrawn`),
 * deleting withdraws and forgets it. One whose launch is already on its way is let start first,
 * then interrupted or deleted like any thread: a withdraw that races the start interrupts the
 * run that started.
 */
import type { HeldHead } from "../../store/held-store.ts";
import { systemClock } from "../../util/clock.ts";
import type { ThreadDeps } from "../deps.ts";

/** How long a withdraw waits for a launch on its way to show how it went. */
const START_WAIT_MS = 30_000;

/** What a withdraw did: withdrew it now, found it ended before, or found its launch on its way. */
export type Withdrawal =
	| { done: "withdrawn" | "ended"; head: HeldHead }
	| { done: "starting" };

/** Withdraws a held dispatch; one already starting is waited for (then handled as a thread). */
export async function withdrawHeld(
	deps: ThreadDeps,
	head: HeldHead,
): Promise<Withdrawal> {
	const holding = deps.holding;
	if (!holding) return { done: "ended", head };
	if (head.status !== "held" && head.status !== "starting")
		return { done: "ended", head };
	const outcome = holding.withdraw(head.thread_id);
	if (outcome === "withdrawn")
		return { done: "withdrawn", head: holding.get(head.thread_id) ?? head };
	if (outcome === undefined) {
		const now = holding.get(head.thread_id) ?? head;
		return now.status === "started"
			? { done: "starting" }
			: { done: "ended", head: now };
	}
	await startSettled(deps, head.thread_id);
	const after = holding.get(head.thread_id) ?? head;
	return after.status === "started"
		? { done: "starting" }
		: { done: "ended", head: after };
}

/** Resolves once a starting held dispatch has started or ended (bounded). */
function startSettled(deps: ThreadDeps, threadId: string): Promise<void> {
	const holding = deps.holding;
	if (!holding?.isOpen(threadId)) return Promise.resolve();
	const clock = deps.clock ?? systemClock;
	return new Promise<void>((resolve) => {
		const cleanups: (() => void)[] = [];
		const end = () => {
			for (const c of cleanups) c();
			resolve();
		};
		cleanups.push(
			holding.onEnd((id) => {
				if (id === threadId) end();
			}),
		);
		cleanups.push(clock.setTimer(end, START_WAIT_MS));
	});
}

/** `t3_interrupt`'s answer for a held dispatch withdrawn now (or ended before). */
export function withdrawnResult(w: {
	done: "withdrawn" | "ended";
	head: HeldHead;
}) {
	const status = w.head.status === "held" ? "withdrawn" : w.head.status;
	return {
		result: {
			thread_id: w.head.thread_id,
			run_id: null,
			run_status: status,
			queued: [] as { run_id: string; held: boolean }[],
			interrupted: w.done === "withdrawn",
		},
		note:
			w.done === "withdrawn"
				? `Withdrawn: the held dispatch "${w.head.thread_id}" will not start. t3_wait on it says interrupted, run_status withdrawn.`
				: `Nothing to withdraw: the held dispatch "${w.head.thread_id}" ${status === "withdrawn" ? "was withdrawn before" : "never started"}.`,
	};
}
