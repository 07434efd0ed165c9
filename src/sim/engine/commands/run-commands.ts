/**
 * The commands that act on a thread's runs and its queue (PROTOCOL.md §6.4, §7.3): interrupting
 * a run (optionally holding the queue), resuming a held queue, editing, cancelling, reordering
 * or promoting (into the running run, as a steer) a queued follow-up, and retrying a run whose workspace preparation failed.
 */
import { TERMINAL_RUN_STATUSES } from "../../../t3/model.ts";
import { stopBackgroundTasks } from "../../agent/wake-run.ts";
import { interruptRun } from "../../runs/run-lifecycle.ts";
import type { CommandHandler } from "../engine-core.ts";
import { retryPreparation } from "../preparation-retry.ts";
import { promoteQueued, reorderQueued } from "../queue-order.ts";
import { editQueuedRun } from "../queued-run-edit.ts";
import type { Row } from "../rows.ts";
import { dropRun, holdQueuedRuns, startNextQueued } from "../run-queue.ts";
import { pendingBackgroundWork, type ThreadState } from "../store.ts";
import { attachmentRefs } from "./message-dispatch.ts";

/** Whether `runId` is the thread's latest run, settled, with background work pending. */
function settledWithBackgroundWork(thread: ThreadState, runId: string) {
	const latest = thread.rows.runs.reduce<Row | undefined>(
		(best, r) =>
			best === undefined || (r.ordinal as number) > (best.ordinal as number)
				? r
				: best,
		undefined,
	);
	return (
		latest?.id === runId && pendingBackgroundWork(thread, latest).length > 0
	);
}

export const RUN_COMMANDS: Record<string, CommandHandler> = {
	"run.interrupt": (core, thread, c) => {
		const runId = String(c.runId);
		const h = core.handles.get(runId);
		// T3's Stop with only background work left names the latest, settled run
		// (`interruptThreadTurn`, idx 70174805780): the work it left ends, with no wake run.
		// What the server writes for it is inferred; the shell then lists no such work.
		if (!h && settledWithBackgroundWork(thread, runId))
			return stopBackgroundTasks(core.kit, thread);
		if (
			!h ||
			h.thread !== thread ||
			h.interrupting ||
			TERMINAL_RUN_STATUSES.has(h.run.status as string)
		) {
			return `Run ${runId} is not interruptible.`;
		}
		if (h.run.status === "queued") {
			dropRun(core, h);
			return core.store.head();
		}
		// The hold is part of the command: queued runs show it before the run has ended.
		const hold = core.queueHolding && c.holdQueue === true;
		if (hold) holdQueuedRuns(core, thread, true);
		return interruptRun(
			core.kit,
			h,
			c.reason === undefined ? undefined : String(c.reason),
			hold,
		);
	},
	"queue.resume": (core, thread) => {
		holdQueuedRuns(core, thread, false);
		startNextQueued(core, thread);
		return core.store.head();
	},
	"queued-run.edit": (core, _thread, c) => {
		const runId = String(c.runId);
		return editQueuedRun(
			core.kit,
			core.handles.get(runId),
			runId,
			String(c.text),
			c.attachments === undefined
				? undefined
				: (attachmentRefs(core, c.attachments) as Row[]),
		);
	},
	"queued-run.cancel": (core, _thread, c) => {
		const h = core.handles.get(String(c.runId));
		if (h?.run.status !== "queued")
			return `Run ${String(c.runId)} is not queued.`;
		dropRun(core, h);
		return core.store.head();
	},
	"queued-run.reorder": (core, thread, c) =>
		reorderQueued(
			core,
			thread,
			String(c.runId),
			c.beforeRunId === null ? null : String(c.beforeRunId),
		),
	"queued-message.promote-to-steer": (core, thread, c) =>
		promoteQueued(core, thread, String(c.queuedRunId), String(c.targetRunId)),
	"prepared-run.retry": (core, thread, c) =>
		retryPreparation(core.kit, thread, String(c.runId), (h) =>
			core.handles.set(h.run.id, h),
		),
};
