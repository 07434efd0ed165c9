/**
 * A thread's runs as the engine keeps them (OBSERVED.md §5.6): starting a run or queueing it
 * behind the busy one, holding and releasing the queue (PROTOCOL.md §7.3), starting the next
 * queued run when one ends, and finding the active run a steer or restart targets.
 */
import { BUSY_RUN_STATUSES, TERMINAL_RUN_STATUSES } from "../../t3/model.ts";
import { pickScript } from "../agent/agent.ts";
import {
	cancelRun,
	createRun,
	driveRun,
	type NewRunInput,
	type RunHandle,
} from "../runs/run-lifecycle.ts";
import type { EngineCore } from "./engine-core.ts";
import { nowIso } from "./rows.ts";
import type { ThreadState } from "./store.ts";

export function threadHandles(
	core: EngineCore,
	thread: ThreadState,
): RunHandle[] {
	return [...core.handles.values()].filter((h) => h.thread === thread);
}

/**
 * Holds or releases a thread's queue. Held queued runs say so in their row (`queueHeld`,
 * PROTOCOL.md §7.3), so readers can tell a held queue from one about to move.
 */
export function holdQueuedRuns(
	core: EngineCore,
	thread: ThreadState,
	held: boolean,
): void {
	if (held) core.heldQueues.add(thread.id);
	else core.heldQueues.delete(thread.id);
	for (const h of threadHandles(core, thread)) {
		if (h.run.status !== "queued" || h.run.queueHeld === held) continue;
		h.run = { ...h.run, queueHeld: held };
		core.store.upsert(thread, "runs", h.run, "run.updated", {
			runId: h.run.id,
			nodeId: h.node.id,
			providerInstanceId: h.instanceId,
		});
	}
}

const queuePlace = (h: RunHandle): number =>
	typeof h.run.queuePosition === "number"
		? h.run.queuePosition
		: Number(h.run.ordinal);

/** The thread's queued runs in T3's delivery order: `queuePosition ?? ordinal`, then the ordinal. */
export function queuedInOrder(
	core: EngineCore,
	thread: ThreadState,
): RunHandle[] {
	return threadHandles(core, thread)
		.filter((h) => h.run.status === "queued")
		.sort(
			(a, b) =>
				queuePlace(a) - queuePlace(b) ||
				Number(a.run.ordinal) - Number(b.run.ordinal),
		);
}

export function startNextQueued(core: EngineCore, thread: ThreadState): void {
	if (
		threadHandles(core, thread).some(
			(h) =>
				BUSY_RUN_STATUSES.has(h.run.status as string) &&
				h.run.status !== "queued",
		)
	)
		return;
	const queued = queuedInOrder(core, thread);
	const next = queued[0];
	if (!next) return;
	next.run = { ...next.run, status: "starting", queuePosition: null };
	core.store.upsert(thread, "runs", next.run, "run.updated", {
		runId: next.run.id,
		nodeId: next.node.id,
		providerInstanceId: next.instanceId,
	});
	queued.slice(1).forEach((h, index) => {
		h.run = { ...h.run, queuePosition: index + 1 };
	});
	void driveRun(core.kit, next, pickScript(next.prompt));
}

export function startRun(
	core: EngineCore,
	thread: ThreadState,
	input: NewRunInput,
): number {
	const { store } = core;
	const { handle, sequence } = createRun(core.kit, thread, input);
	core.handles.set(handle.run.id, handle);
	// A follow-up joining a held queue is held with it.
	if (input.status === "queued" && core.heldQueues.has(thread.id))
		holdQueuedRuns(core, thread, true);
	if (thread.app.activeProviderThreadId == null) {
		thread.app = {
			...thread.app,
			activeProviderThreadId: handle.run.providerThreadId,
			updatedAt: nowIso(),
		};
		store.appendThreadEvent(thread, "thread.metadata-updated", {
			providerInstanceId: handle.instanceId,
		});
	}
	if (input.status !== "queued")
		void driveRun(core.kit, handle, pickScript(input.text));
	return Math.max(sequence, store.head());
}

/** The run a steer or restart would target: the newest one preparing, starting or running. */
export function activeRun(
	core: EngineCore,
	thread: ThreadState,
): { id: string; status: string; instanceId: string } | undefined {
	const active = threadHandles(core, thread)
		.filter(
			(h) =>
				!h.interrupting &&
				["preparing", "starting", "running"].includes(String(h.run.status)),
		)
		.sort((a, b) => Number(b.run.ordinal) - Number(a.run.ordinal))[0];
	return active
		? {
				id: active.run.id,
				status: String(active.run.status),
				instanceId: active.instanceId,
			}
		: undefined;
}

/** Cancels a run and forgets its handle. */
export function dropRun(core: EngineCore, h: RunHandle): void {
	cancelRun(core.kit, h);
	core.handles.delete(h.run.id);
}

/** Cancel every non-terminal run (server restart / stop). */
export function cancelAll(core: EngineCore): void {
	for (const h of core.handles.values())
		if (!TERMINAL_RUN_STATUSES.has(h.run.status as string))
			cancelRun(core.kit, h);
	core.handles.clear();
}
