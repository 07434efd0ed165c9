/**
 * `t3_manage` `reorder_queued` / `promote_queued`: `queued-run.reorder {runId, beforeRunId}` and
 * `queued-message.promote-to-steer {queuedRunId, targetRunId}` (USAGE-AND-QUEUES.md §3). Both are
 * held to the thread's runtime mode, like `edit_queued`. What T3 would refuse (a run that is not
 * queued, a held queue, no running run to steer into) is refused before anything is sent, saying
 * what works instead; a T3 without the command says so, naming the machine.
 */
import { T3Error } from "../../t3/machine-api.ts";
import type { Run, ThreadProjection } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import type { LocatedThread } from "../locate.ts";
import { isUnsupported, unsupportedError } from "../unsupported.ts";
import { readHeldToMode } from "./held-read.ts";
import { queuedRuns } from "./interrupt.ts";
import { DONE } from "./queued-run.ts";

export type QueueOrderAction = "reorder_queued" | "promote_queued";

/** The queued run `runId` of the thread, or an error saying what it is instead. */
function queuedRun(
	projection: ThreadProjection,
	threadId: string,
	runId: string,
	field: string,
	action: QueueOrderAction,
): Run {
	const run = projection.runs.find((r) => r.id === runId);
	if (!run)
		throw new ThreadError(
			`${field}: thread "${threadId}" has no run "${runId}". Take it from t3_thread queued[].run_id.`,
		);
	if (run.status === "queued") return run;
	const verb = action === "promote_queued" ? "promoted" : "reordered";
	if (DONE.has(run.status))
		throw new ThreadError(
			`${field}: run "${runId}" of thread "${threadId}" is not queued (its status is ${run.status}); only a queued run can be ${verb}. t3_thread queued lists the queued runs; send a new message with t3_dispatch instead.`,
		);
	throw new ThreadError(
		`${field}: run "${runId}" of thread "${threadId}" is not queued: it has already started (its status is ${run.status}); only a queued run can be ${verb}. Add to it with t3_dispatch mode "steer", or stop it with t3_interrupt.`,
	);
}

/** The run a promoted message would steer into: the thread's newest running run. */
export function runningTarget(
	projection: ThreadProjection,
	threadId: string,
): Run {
	const newest = (statuses: string[]) =>
		projection.runs
			.filter((r) => statuses.includes(r.status))
			.sort((a, b) => b.ordinal - a.ordinal)[0];
	const running = newest(["running"]);
	if (running) return running;
	const starting = newest(["preparing", "starting"]);
	if (starting)
		throw new ThreadError(
			`promote_queued: the active run "${starting.id}" of thread "${threadId}" has not started running yet (its status is ${starting.status}); retry in a moment, when it is running.`,
		);
	const waiting = newest(["waiting"]);
	if (waiting)
		throw new ThreadError(
			`promote_queued: no run of thread "${threadId}" is running: run "${waiting.id}" waits for an answer. Answer it with t3_answer; the queued message then starts as its own run (or cancel it with action "cancel_queued" and send it with t3_dispatch).`,
		);
	throw new ThreadError(
		`promote_queued: no run of thread "${threadId}" is running, so there is nothing to steer into; the queued message starts as its own run when the queue moves. To send it now, cancel it with action "cancel_queued" and dispatch it normally with t3_dispatch.`,
	);
}

/** What to do after T3 refused, from the text of its refusal. */
export function afterRefusal(text: string): string {
	if (/held/i.test(text))
		return 'The queue is held: resume it first with t3_manage action "resume_queue", then retry.';
	if (/not running|no longer/i.test(text))
		return "The run it would join has ended: dispatch the message normally with t3_dispatch (cancel the queued one with cancel_queued first).";
	if (/not queued/i.test(text))
		return "Check which runs are still queued with t3_thread queued.";
	if (/archived/i.test(text))
		return 'The thread is archived: unarchive it with t3_manage action "unarchive" first.';
	return "Check the thread with t3_thread.";
}

const UNSUPPORTED = {
	reorder_queued: ["reordering queued runs", "queued-run.reorder"],
	promote_queued: [
		"promoting a queued message to a steer",
		"queued-message.promote-to-steer",
	],
} as const;

/** Sends the command; returns the sequence T3 wrote it at. */
export async function orderQueuedRun(
	deps: ThreadDeps,
	located: LocatedThread,
	action: QueueOrderAction,
	runId: string | undefined,
	beforeRunId: string | null | undefined,
	reason: (error: T3Error) => string,
): Promise<number> {
	const { threadId, entry } = located;
	if (runId === undefined)
		throw new ThreadError(
			`run_id: required for action "${action}" (the queued run, from t3_thread queued[].run_id).`,
		);
	// A fresh read: the queue may have moved since the caller looked.
	const projection = await readHeldToMode(deps, located, action);
	const run = queuedRun(projection, threadId, runId, "run_id", action);
	let command: Record<string, unknown> & { type: string; commandId: string };
	const base = { commandId: deps.newId(), threadId };
	if (action === "reorder_queued") {
		const before = beforeRunId ?? null;
		if (before === runId)
			throw new ThreadError(
				"before_run_id: names the run being moved; give another queued run (or null to move it last).",
			);
		if (before !== null)
			queuedRun(projection, threadId, before, "before_run_id", action);
		command = {
			...base,
			type: "queued-run.reorder",
			runId,
			beforeRunId: before,
		};
	} else {
		if (run.queueHeld === true || queuedRuns(projection).some((q) => q.held))
			throw new ThreadError(
				`promote_queued: the queue of thread "${threadId}" is held (by an interrupt with hold_queue or a T3 restart), and T3 promotes nothing from a held queue. Resume it first with t3_manage action "resume_queue", then promote.`,
			);
		const target = runningTarget(projection, threadId);
		command = {
			...base,
			type: "queued-message.promote-to-steer",
			queuedRunId: runId,
			targetRunId: target.id,
		};
	}
	try {
		const { sequence } = await entry.machine.dispatch(command);
		return sequence;
	} catch (error) {
		if (isUnsupported(error)) {
			const [what, rpc] = UNSUPPORTED[action];
			throw unsupportedError(
				entry.config.name,
				what,
				rpc,
				`its T3 lacks ${action}. ${action === "promote_queued" ? 'To get the message to the agent now, cancel it with "cancel_queued" and send it with t3_dispatch mode "steer".' : 'Cancel the queued runs with "cancel_queued" and send them again in the order you want.'}`,
			);
		}
		if (error instanceof T3Error && error.code === "REJECTED") {
			const text = reason(error);
			throw new ThreadError(
				`T3 machine "${entry.config.name}" refused ${action} on thread "${threadId}": ${text} ${afterRefusal(text)}`,
			);
		}
		throw error;
	}
}
