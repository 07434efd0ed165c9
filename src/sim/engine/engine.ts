/**
 * Room `sim/engine/`: the simulator's orchestration engine and its state: the store, row builders,
 * run queue, receipts and the command handlers in `commands/`. May import `sim/runs`, `sim/agent`,
 * `sim/repo`, the `sim/` root and T3's status sets from `t3/model.ts`; never the wire.
 */
/**
 * The orchestration engine of the simulator: `orchestration.dispatchCommand` commands and
 * `orchestration.launchThread` (PROTOCOL.md §5.2, §6), idempotent by commandId, with the run
 * queue of OBSERVED.md §5.6. Results are `Outcome`s, which rpc-server.ts encodes as Exits.
 * This file routes; commands/ holds the commands, engine-core.ts the state they share.
 */
import { resolveElsewhere } from "../agent/request-kinds.ts";
import { resumeAfterLimitNow } from "../agent/usage-limit.ts";
import { endBackgroundTasks } from "../agent/wake-run.ts";
import { commandDefect } from "./commands/command-schema.ts";
import { dispatchMessage } from "./commands/message-dispatch.ts";
import { REQUEST_COMMANDS } from "./commands/request-commands.ts";
import { RUN_COMMANDS } from "./commands/run-commands.ts";
import { THREAD_COMMANDS } from "./commands/thread-commands.ts";
import { launchThread } from "./commands/thread-launch.ts";
import {
	type CommandHandler,
	createEngineCore,
	type EngineDeps,
} from "./engine-core.ts";
import { cancelAll } from "./run-queue.ts";
import { newThread } from "./thread-app.ts";
import { forkThread } from "./thread-fork.ts";

export type Outcome = { ok: unknown } | { fail: unknown } | { die: unknown };

export interface Engine {
	dispatch(command: Record<string, unknown>): Outcome;
	launch(input: Record<string, unknown>): Outcome;
	getProjection(threadId: string): Outcome;
	finishRun(threadId: string): void;
	/** Cancel every non-terminal run (server restart / stop). */
	cancelAll(): void;
	/** Forget every thread, run and command receipt: a server that lost its state. */
	wipe(): void;
}

/** The commands on an existing thread, by type. */
const COMMANDS: Record<string, CommandHandler> = {
	"message.dispatch": dispatchMessage,
	...RUN_COMMANDS,
	...REQUEST_COMMANDS,
	...THREAD_COMMANDS,
};

export function createEngine(deps: EngineDeps): Engine {
	const core = createEngineCore(deps, (command) => void dispatch(command));
	const { store, receipts, handles, kit } = core;

	/** Execute one validated command; returns the last sequence it wrote, or a failure message. */
	function execute(c: Record<string, unknown>, type: string): number | string {
		const threadId = String(c.threadId);
		if (type === "thread.fork") return forkThread(store, c);
		if (type === "thread.create") {
			if (store.threads.has(threadId))
				return `Thread ${threadId} already exists.`;
			return newThread(store, c, String(c.creationSource)).lastSequence;
		}
		const thread = store.threads.get(threadId);
		if (!thread || thread.app.deletedAt)
			return `Failed to load orchestration projection for thread ${threadId}.`;
		const command = COMMANDS[type];
		if (!command) return `Unsupported command ${type}.`;
		return command(core, thread, c);
	}

	function dispatch(c: Record<string, unknown>): Outcome {
		const type = typeof c.type === "string" ? c.type : "";
		const defect = commandDefect(c, type, core.compat, core.queueHolding);
		if (defect) return { die: defect };
		const commandId = String(c.commandId);
		const receipt = receipts.get(commandId);
		// Replays return the original result, whatever the payload says (OBSERVED.md §5.8).
		if (receipt && !receipt.launch) return receipt.outcome;
		const result = execute(c, type);
		const outcome: Outcome =
			typeof result === "number"
				? { ok: { sequence: result } }
				: {
						fail: {
							_tag: "OrchestrationV2DispatchCommandError",
							commandId,
							commandType: type,
							message: result,
							detail: result,
						},
					};
		receipts.set(commandId, { outcome });
		return outcome;
	}

	return {
		dispatch,
		launch: (input) => launchThread(core, input),
		getProjection(threadId) {
			const thread = store.threads.get(threadId);
			if (!thread || thread.app.deletedAt) {
				return {
					fail: {
						_tag: "OrchestrationV2GetThreadProjectionError",
						threadId,
						message: `Failed to load orchestration V2 thread ${threadId}.`,
					},
				};
			}
			return { ok: store.projection(thread) };
		},
		finishRun(threadId) {
			const thread = store.threads.get(threadId);
			if (thread) {
				endBackgroundTasks(thread);
				resumeAfterLimitNow(thread);
			}
			for (const h of handles.values()) {
				if (h.thread.id !== threadId) continue;
				if (resolveElsewhere(kit, h)) continue;
				if (h.release) h.release();
				else h.finishRequested = true;
			}
		},
		cancelAll: () => cancelAll(core),
		wipe() {
			cancelAll(core);
			receipts.clear();
			core.heldQueues.clear();
			store.wipeThreads();
		},
	};
}
