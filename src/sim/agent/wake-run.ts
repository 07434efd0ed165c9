/**
 * Prompt "start a background task": the run ends with provider background work still going (the
 * shell's `pendingBackgroundTasks`). Seconds later (or at `sim.finishRun`) that work finishes and T3 itself wakes the
 * thread: a `message.dispatch` of its own (`creationSource: "server"`, as upstream's limit-resume
 * worker sends) whose message carries a `notification`, so the wake run's timeline opens with a
 * `notification` item. Nobody dispatched that run: a connector must not take it for its own.
 */
import { newId } from "../engine/rows.ts";
import type { ThreadState } from "../engine/store.ts";
import type { RunHandle, RunKit } from "../runs/run-rows.ts";

export const BACKGROUND_TASK_PROMPT = "start a background task";
/** How long the background command runs, unless `sim.finishRun` ends it first (tests). */
const TASK_MS = 3_000;
/** Per thread, the background tasks still running: each ends (once) when called. */
const running = new WeakMap<ThreadState, Set<() => void>>();

/** Ends every background task of the thread now (`sim.finishRun`). */
export function endBackgroundTasks(thread: ThreadState): void {
	for (const end of [...(running.get(thread) ?? [])]) end();
}

export function startBackgroundTask(
	kit: RunKit,
	h: RunHandle,
	description: string,
): void {
	const { thread } = h;
	const task = { taskId: `task-${newId()}`, description, kind: "command" };
	thread.backgroundTasks = [...thread.backgroundTasks, task];
	const providerInstanceId = h.instanceId;
	kit.store.appendThreadEvent(thread, "thread.metadata-updated", {
		providerInstanceId,
	});
	let cancel = () => {};
	const end = () => {
		cancel();
		running.get(thread)?.delete(end);
		finish();
	};
	const tasks = running.get(thread) ?? new Set();
	tasks.add(end);
	running.set(thread, tasks);
	cancel = kit.scheduler.later(TASK_MS, end);
	function finish() {
		if (!kit.store.liveThread(thread.id)) return;
		thread.backgroundTasks = thread.backgroundTasks.filter(
			(t) => t.taskId !== task.taskId,
		);
		kit.store.appendThreadEvent(thread, "thread.metadata-updated", {
			providerInstanceId,
		});
		const wakeId = `wake:${task.taskId}`;
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
}
