/**
 * The engine's shared state: the store, the run kit, the live run handles, the held queues and
 * the command receipts. engine.ts builds one per server; every command handler works on it.
 */
import { TERMINAL_RUN_STATUSES } from "../../t3/model.ts";
import type { SimCompat } from "../compat.ts";
import type { RunHandle, RunKit } from "../runs/run-lifecycle.ts";
import type { AttachmentStore } from "./attachments.ts";
import type { Outcome } from "./engine.ts";
import { startNextQueued } from "./run-queue.ts";
import type { Scheduler } from "./scheduler.ts";
import type { Store, ThreadState } from "./store.ts";

export interface EngineDeps {
	store: Store;
	scheduler: Scheduler;
	stepMs: number;
	/** Which T3 Code the engine imitates (compat.ts); default "current". */
	compat?: SimCompat;
	/** false: a server without queue holding (OBSERVED.md §6.4 15): `holdQueue` is ignored, no `queue.resume`. */
	queueHolding?: boolean;
	/** Attachments persisted by `assets.persistChatAttachments`, which messages refer to. */
	attachments?: AttachmentStore;
	/** A run failed on a usage limit: T3 then reports that provider's session window used up. */
	onUsageLimit?: (instanceId: string, resetAt: string) => void;
}

export interface EngineCore {
	store: Store;
	scheduler: Scheduler;
	stepMs: number;
	compat: SimCompat;
	queueHolding: boolean;
	attachments?: AttachmentStore;
	kit: RunKit;
	/** Command results by commandId: replays answer from here (OBSERVED.md §5.8). */
	receipts: Map<
		string,
		{ outcome: Outcome; threadId?: string; launch?: boolean }
	>;
	handles: Map<string, RunHandle>;
	heldQueues: Set<string>;
}

/** One validated thread command: the last sequence it wrote, or a failure message. */
export type CommandHandler = (
	core: EngineCore,
	thread: ThreadState,
	c: Record<string, unknown>,
) => number | string;

export function createEngineCore(
	deps: EngineDeps,
	selfDispatch: RunKit["selfDispatch"],
): EngineCore {
	const { store, scheduler } = deps;
	const handles = new Map<string, RunHandle>();
	const heldQueues = new Set<string>();
	const kit: RunKit = {
		store,
		scheduler,
		stepMs: deps.stepMs,
		compat: deps.compat ?? "current",
		workspaceRoot: (thread) =>
			String(
				store.projects.get(thread.app.projectId as string)?.row.workspaceRoot ??
					"/srv/t3",
			),
		onRunFinished(thread) {
			for (const [id, h] of handles)
				if (
					h.thread === thread &&
					TERMINAL_RUN_STATUSES.has(h.run.status as string)
				)
					handles.delete(id);
			// The hold was applied when the interrupt was accepted: a queue.resume that came
			// before the run ended has released it, and the run's end must not hold it again.
			if (!heldQueues.has(thread.id)) startNextQueued(core, thread);
		},
		selfDispatch,
		onUsageLimit: (instanceId, resetAt) =>
			deps.onUsageLimit?.(instanceId, resetAt),
	};
	const core: EngineCore = {
		store,
		scheduler,
		stepMs: deps.stepMs,
		compat: deps.compat ?? "current",
		queueHolding: deps.queueHolding !== false,
		attachments: deps.attachments,
		kit,
		receipts: new Map(),
		handles,
		heldQueues,
	};
	return core;
}
