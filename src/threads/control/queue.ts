/**
 * `t3_manage` `resume_queue`: `queue.resume` (PROTOCOL.md §6.4), which lets the runs held by an
 * interrupt with `hold_queue` start in order. Resuming a queue that is not held changes nothing.
 */

import type { OperationPlace } from "../../store/operations.ts";
import { latestRun } from "../../t3/derive/derive.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { locateThread, placeOf } from "../locate.ts";
import { readHeldToMode } from "./held-read.ts";
import { type QueuedRun, queuedRuns } from "./interrupt.ts";
import { isPinned } from "./organize.ts";

export interface ResumeQueueResult {
	thread_id: string;
	/** The thread's status as T3 reports it after the request (the latest run's, or "idle"). */
	status: string;
	title: string;
	archived: boolean;
	pinned: boolean;
	/** The runs still queued afterwards; none is held once T3 has taken the resume. */
	queued: QueuedRun[];
	/** Whether any queued run was held before: otherwise the resume changed nothing. */
	wasHeld: boolean;
	/** Where the thread lives (for the idempotency key's row). */
	place: OperationPlace;
}

export async function resumeQueue(
	deps: ThreadDeps,
	threadId: string,
): Promise<ResumeQueueResult> {
	const located = await locateThread(deps, threadId);
	const projection = await readHeldToMode(deps, located, "resume_queue");
	const held = queuedRuns(projection).some((q) => q.held);
	try {
		await located.entry.machine.dispatch({
			type: "queue.resume",
			commandId: deps.newId(),
			threadId,
		});
	} catch (error) {
		if (!(error instanceof T3Error)) throw error;
		// A server without queue holding does not know the command (a Die); its queues never wait.
		if (error.code === "DEFECT")
			throw new ThreadError(
				`T3 machine "${located.entry.config.name}" does not support queue holding (no queue.resume): its queued runs start by themselves after an interrupt, so there is nothing to resume.`,
			);
		// T3 refuses commands that would change nothing: a queue that is not held stays as it is.
		if (error.code !== "REJECTED" || held) throw error;
	}
	const after = (await located.entry.machine.getThread(threadId)).projection;
	return {
		thread_id: threadId,
		status: latestRun(after)?.status ?? "idle",
		title: after.thread.title,
		archived: Boolean(after.thread.archivedAt),
		pinned: isPinned(located.entry.machine.thread(threadId) ?? after.thread),
		queued: queuedRuns(after),
		wasHeld: held,
		place: placeOf(located),
	};
}
