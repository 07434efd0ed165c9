/**
 * The queue's order and promotion (USAGE-AND-QUEUES.md §3): `queued-run.reorder {runId,
 * beforeRunId|null}` moves a queued run before another one (or to the end) and renumbers
 * `queuePosition` 1..n over the queued runs, writing `run.updated` only for rows that changed;
 * `queued-message.promote-to-steer {queuedRunId, targetRunId}` cancels the queued run and steers
 * its message into the running target. Delivery follows `queuePosition`, then the ordinal.
 */
import { type SteerMessage, steerRun } from "../runs/run-steer.ts";
import type { EngineCore } from "./engine-core.ts";
import { newId } from "./rows.ts";
import { dropRun, queuedInOrder } from "./run-queue.ts";
import type { ThreadState } from "./store.ts";

export function reorderQueued(
	core: EngineCore,
	thread: ThreadState,
	runId: string,
	beforeRunId: string | null,
): number | string {
	const queued = queuedInOrder(core, thread);
	const moved = queued.find((h) => h.run.id === runId);
	if (!moved) return `Run ${runId} is not queued.`;
	const rest = queued.filter((h) => h !== moved);
	let at = rest.length;
	if (beforeRunId !== null) {
		at = rest.findIndex((h) => h.run.id === beforeRunId);
		if (at < 0) return `Queue target ${beforeRunId} is not queued.`;
	}
	rest.splice(at, 0, moved);
	rest.forEach((h, index) => {
		if (h.run.queuePosition === index + 1) return;
		h.run = { ...h.run, queuePosition: index + 1 };
		core.store.upsert(thread, "runs", h.run, "run.updated", {
			runId: h.run.id,
			nodeId: h.node.id,
			providerInstanceId: h.instanceId,
		});
	});
	return core.store.head();
}

export function promoteQueued(
	core: EngineCore,
	thread: ThreadState,
	queuedRunId: string,
	targetRunId: string,
): number | string {
	const h = core.handles.get(queuedRunId);
	if (h?.thread !== thread || h.run.status !== "queued")
		return `Run ${queuedRunId} is not queued.`;
	if (thread.app.archivedAt)
		return `Thread ${thread.id} is archived; queued messages cannot be promoted.`;
	if (core.heldQueues.has(thread.id) || h.run.queueHeld === true)
		return `The queue of thread ${thread.id} is held; resume it before promoting a queued message.`;
	const target = core.handles.get(targetRunId);
	if (
		target?.thread !== thread ||
		target.run.status !== "running" ||
		target.interrupting
	)
		return `Target run ${targetRunId} is no longer running.`;
	const message = core.store.find(
		thread,
		"messages",
		String(h.run.userMessageId),
	);
	const steer: SteerMessage = {
		messageId: newId(),
		text: h.prompt,
		createdBy: "user",
		creationSource: String(message?.creationSource ?? "mcp"),
		inputIntent: "promoted_queued_to_steer",
		attachments: (message?.attachments as unknown[] | undefined) ?? [],
	};
	dropRun(core, h);
	return steerRun(core.kit, target, steer);
}
