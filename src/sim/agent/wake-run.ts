/**
 * Prompt "start a background task": the run ends with provider background work still going. As
 * in T3 it sits on the provider thread's roster (`providerThreads[].pendingBackgroundTasks`,
 * written with `provider-thread.updated`), from which the shell derives its
 * `pendingBackgroundTasks` (store.ts, idx 70607754371), so a projection reader sees it too.
 * Seconds later (or at `sim.finishRun`) that work finishes and T3 itself wakes the thread: a
 * `message.dispatch` of its own (`creationSource: "server"`, as upstream's limit-resume worker
 * sends) whose message carries a `notification`, so the wake run's timeline opens with a
 * `notification` item. Nobody dispatched that run: a connector must not take it for its own.
 * T3's Stop on the settled run (`run.interrupt` of the latest run, idx 70174805780) ends the work
 * instead, with no wake.
 */
import { newId, nowIso, type Row } from "../engine/rows.ts";
import type { ThreadState } from "../engine/store.ts";
import type { RunHandle, RunKit } from "../runs/run-rows.ts";

export const BACKGROUND_TASK_PROMPT = "start a background task";
/** How long the background command runs, unless `sim.finishRun` ends it first (tests). */
const TASK_MS = 3_000;

interface Running {
	/** The work finishes: off the roster, then T3's wake run. */
	finish(): void;
	/** Stopped: off the roster, no wake. */
	stop(): void;
}

/** Per thread, the background tasks still running, by task id. */
const running = new WeakMap<ThreadState, Map<string, Running>>();

/** Ends every background task of the thread now (`sim.finishRun`). */
export function endBackgroundTasks(thread: ThreadState): void {
	for (const task of [...(running.get(thread)?.values() ?? [])]) task.finish();
}

/** Stops every background task of the thread without a wake; the last sequence written. */
export function stopBackgroundTasks(kit: RunKit, thread: ThreadState): number {
	for (const task of [...(running.get(thread)?.values() ?? [])]) task.stop();
	return kit.store.head();
}

/** Adds the task to (or takes it off) the roster of the run's provider thread. */
function updateRoster(
	kit: RunKit,
	thread: ThreadState,
	providerThreadId: string,
	change: (tasks: Record<string, unknown>[]) => Record<string, unknown>[],
	env: { driver: string; providerInstanceId: string },
): void {
	const row = kit.store.find(thread, "providerThreads", providerThreadId);
	if (!row) return;
	const roster = Array.isArray(row.pendingBackgroundTasks)
		? (row.pendingBackgroundTasks as Record<string, unknown>[])
		: [];
	const next: Row = {
		...row,
		pendingBackgroundTasks: change(roster),
		updatedAt: nowIso(),
	};
	kit.store.upsert(
		thread,
		"providerThreads",
		next,
		"provider-thread.updated",
		env,
	);
}

export function startBackgroundTask(
	kit: RunKit,
	h: RunHandle,
	description: string,
): void {
	const { thread } = h;
	const task = { taskId: `task-${newId()}`, description, kind: "command" };
	const providerThreadId = h.run.providerThreadId as string;
	const env = { driver: h.instanceId, providerInstanceId: h.instanceId };
	updateRoster(kit, thread, providerThreadId, (tasks) => [...tasks, task], env);
	const tasks = running.get(thread) ?? new Map<string, Running>();
	running.set(thread, tasks);
	const end = (wake: boolean) => {
		cancel();
		tasks.delete(task.taskId);
		if (!kit.store.liveThread(thread.id)) return;
		updateRoster(
			kit,
			thread,
			providerThreadId,
			(list) => list.filter((t) => t.taskId !== task.taskId),
			env,
		);
		if (wake) wakeThread(kit, thread, task.taskId, description);
	};
	tasks.set(task.taskId, {
		finish: () => end(true),
		stop: () => end(false),
	});
	const cancel = kit.scheduler.later(TASK_MS, () => end(true));
}

/** T3's own message once the work ended (`creationSource: "server"`, with a notification). */
function wakeThread(
	kit: RunKit,
	thread: ThreadState,
	taskId: string,
	description: string,
): void {
	const wakeId = `wake:${taskId}`;
	kit.selfDispatch({
		type: "message.dispatch",
		commandId: wakeId,
		threadId: thread.id,
		messageId: wakeId,
		text: `The background command "${description}" finished. Report its result.`,
		attachments: [],
		dispatchMode: { type: "start_immediately" },
		createdBy: "user",
		creationSource: "server",
		notification: {
			source: { kind: "command" },
			outcome: "completed",
			summary: `Background command finished: ${description}`,
			detail: "exit code 0",
		},
	});
}
