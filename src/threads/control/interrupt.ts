/**
 * `t3_interrupt`: `run.interrupt` on the thread's run in flight, as T3's Stop picks it
 * (stop-target.ts): never a `waiting` run, whose turn is over; with only background work left
 * (the latest run settled, `pendingBackgroundTasks`), the latest run, which ends that work
 * (idx 70174805780). By default queued follow-ups then start in order (as on servers without
 * queue holding, captures-v2 ws-busy.jsonl); with `holdQueue` they wait for `queue.resume`
 * (PROTOCOL.md §6.4, `resumeQueue` in queue.ts). It reports the status T3 shows afterwards and
 * never claims the run stopped before T3 says so (OBSERVED.md §5.7: an interrupt can leave a run
 * running).
 */
import { latestRun } from "../../t3/derive/derive.ts";
import {
	projectionBackgroundTasks,
	stopTarget,
} from "../../t3/derive/stop-target.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { Run, ThreadProjection } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { heldOf, locateThread, readDetail } from "../locate.ts";
import { withdrawHeld, withdrawnResult } from "./held-control.ts";

export interface QueuedRun {
	run_id: string;
	held: boolean;
}

/** The thread's queued runs in the order they will start, and whether their queue is held. */
/**
 * T3's delivery order: `queuePosition` (what T3's app reorders), else the ordinal for servers
 * without it (the pre-release engine), runs with a position before those without.
 */
function queueOrder(a: Run, b: Run): number {
	const pa = typeof a.queuePosition === "number" ? a.queuePosition : null;
	const pb = typeof b.queuePosition === "number" ? b.queuePosition : null;
	if (pa !== null && pb !== null && pa !== pb) return pa - pb;
	if ((pa === null) !== (pb === null)) return pa === null ? 1 : -1;
	return a.ordinal - b.ordinal;
}

export function queuedRuns(projection: ThreadProjection): QueuedRun[] {
	return projection.runs
		.filter((r) => r.status === "queued")
		.sort(queueOrder)
		.map((r) => ({ run_id: r.id, held: r.queueHeld === true }));
}

export async function interrupt(
	deps: ThreadDeps,
	threadId: string,
	holdQueue = false,
) {
	// A held dispatch is withdrawn; one whose launch was on its way is interrupted below.
	const heldHead = heldOf(deps, threadId);
	if (heldHead) {
		const w = await withdrawHeld(deps, heldHead);
		if (w.done !== "starting") return withdrawnResult(w);
	}
	const located = await locateThread(deps, threadId);
	const { projection } = await readDetail(located, true);
	const shell = located.shell ?? projection.thread;
	const target = stopTarget(projection, shell);
	const queuedBefore = queuedRuns(projection);
	if (!target) {
		const first = queuedBefore[0];
		if (first) {
			// Reporting success here would hide that the queued work is still there.
			throw new ThreadError(
				first.held
					? `Nothing is running on thread "${threadId}" to interrupt: its queue is held (${queuedBefore.length} queued run${queuedBefore.length === 1 ? "" : "s"}, next ${first.run_id}; held after an interrupt or server restart). Call t3_manage with action "resume_queue" to start them.`
					: `Nothing is running on thread "${threadId}" to interrupt yet: queued run ${first.run_id} is about to start. Call t3_interrupt again once it runs (t3_thread shows its status).`,
			);
		}
		const latest = latestRun(projection);
		return {
			result: {
				thread_id: threadId,
				run_id: latest?.id ?? null,
				run_status: latest?.status ?? "idle",
				queued: [] as QueuedRun[],
				interrupted: false,
			},
			note: `Nothing to interrupt: thread "${threadId}" has no active run${latest ? ` (latest run is ${latest.status}${latest.status === "waiting" ? ": its turn is over and T3 is finishing it; t3_wait reports how it ended" : ""})` : ""}.`,
		};
	}
	const command: Record<string, unknown> & {
		type: string;
		commandId: string;
	} = {
		type: "run.interrupt",
		commandId: deps.newId(),
		threadId,
		runId: target.run.id,
		reason: "Interrupted through t3code-mcp",
	};
	// Only sent when asked: a server that holds by default would otherwise strand the queue.
	if (holdQueue) command.holdQueue = true;
	let holdRefused = false;
	try {
		await located.entry.machine.dispatch(command);
	} catch (error) {
		// A server that rejects the field at decode time (a Die): same command without it.
		if (!(holdQueue && error instanceof T3Error && error.code === "DEFECT"))
			throw error;
		const { holdQueue: _, ...plain } = command;
		holdRefused = true;
		await located.entry.machine.dispatch({ ...plain, commandId: deps.newId() });
	}
	const after = (await located.entry.machine.getThread(threadId)).projection;
	const run = after.runs.find((r) => r.id === target.run.id);
	if (target.kind === "background")
		return {
			result: {
				thread_id: threadId,
				run_id: target.run.id,
				run_status: run?.status ?? target.run.status,
				queued: [] as QueuedRun[],
				interrupted: true,
			},
			note: backgroundNote(target.run.id, target.tasks, projection, after),
		};
	// The runs that were queued behind it, as T3 shows them now (one may have started already).
	const heldNow = new Set(
		queuedRuns(after)
			.filter((q) => q.held)
			.map((q) => q.run_id),
	);
	const queued = queuedBefore.map((q) => ({
		run_id: q.run_id,
		held: heldNow.has(q.run_id),
	}));
	const held = queued.filter((q) => q.held).length;
	let note: string | undefined;
	if (queued.length > 0) {
		note =
			held === queued.length
				? `The ${queued.length} queued run${queued.length === 1 ? " is" : "s are"} held: call t3_manage with action "resume_queue" to start them.`
				: holdQueue
					? `This T3 server ${holdRefused ? "does not support" : "did not report"} queue holding: the ${queued.length} queued run${queued.length === 1 ? "" : "s"} start${queued.length === 1 ? "s" : ""} in order once the interrupt is done.`
					: `The ${queued.length} queued run${queued.length === 1 ? "" : "s"} start${queued.length === 1 ? "s" : ""} in order once the interrupt is done.`;
	}
	return {
		result: {
			thread_id: threadId,
			run_id: target.run.id,
			run_status: run?.status ?? target.run.status,
			queued,
			interrupted: true,
		},
		note,
	};
}

/**
 * What stopping a settled run's background work did, as the provider threads' rosters show it
 * right after; work T3 lists only from the timeline is left to t3_thread to show.
 */
function backgroundNote(
	runId: string,
	tasks: number,
	before: ThreadProjection,
	after: ThreadProjection,
): string {
	const stopped = `Run ${runId} had already ended; T3 was asked to stop the ${tasks} background task${tasks === 1 ? "" : "s"} it left running`;
	const listed = projectionBackgroundTasks(before).length;
	const left = projectionBackgroundTasks(after).length;
	if (listed > 0 && left === 0) return `${stopped}, and lists none now.`;
	return `${stopped}; t3_thread shows what is left (background_tasks).`;
}
