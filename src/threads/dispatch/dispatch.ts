/**
 * Room `threads/dispatch/`: starting runs (`t3_dispatch`): the entry here, then launch, continue,
 * fork, the idempotency claim and its replay, recording before sending, and the settings,
 * workspace, attachments and model checks a dispatch carries. May import `t3/`, `store/`,
 * `rights/` (run limits), `util/`, the `threads/` root and `threads/control`, `threads/wait`;
 * never `mcp/`, `tools/`, `http/` or `cli/`.
 */
/**
 * `t3_dispatch`: start a new thread (`orchestration.launchThread`) or a follow-up run in an
 * existing one (`message.dispatch`), and return at once. Ids are minted once and stored with
 * the exact command before it is sent, so every retry re-sends the same command.
 * This is the entry: it checks the arguments and picks the path (launch.ts, continue.ts,
 * fork-dispatch.ts, or reuse.ts for a key used before).
 */

import { clientCap } from "../../rights/run-limits.ts";
import { type RunSlot, slotsOf } from "../../rights/run-slots.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import type { ProjectRef } from "../shapes.ts";
import { type AttachmentArg, checkAttachments } from "./attachments.ts";
import { TOOL } from "./claim.ts";
import { continueThread } from "./continue.ts";
import { dispatchFork } from "./fork-dispatch.ts";
import { keyArgument } from "./idempotency.ts";
import { launch } from "./launch.ts";
import { checkPrompt } from "./prompt.ts";
import { reuse } from "./reuse.ts";
import type { DispatchMode, InteractionMode, RuntimeMode } from "./settings.ts";
import type { Workspace } from "./workspace.ts";

/** T3 refuses very long messages (about 120 000 characters); stay clearly below. */
export { PROMPT_LIMIT } from "./prompt.ts";

export interface DispatchArgs {
	machine?: string;
	project?: string;
	prompt: string;
	title?: string;
	model?: string;
	thread_id?: string;
	watch?: boolean;
	idempotency_key?: string;
	/** The older name of `idempotency_key`. */
	request_id?: string;
	mode?: DispatchMode;
	runtime_mode?: RuntimeMode;
	interaction_mode?: InteractionMode;
	options?: Record<string, string | boolean>;
	/** Where a new thread works (workspace.ts). */
	workspace?: Workspace;
	base_ref?: string;
	branch?: string;
	worktree_path?: string;
	/** Start the new thread as a fork of this one (fork.ts), up to `fork_run_id`. */
	fork_of?: string;
	fork_run_id?: string;
	/** Files sent with the message (attachments.ts). */
	attachments?: AttachmentArg[];
}

export type DispatchResult = {
	thread_id: string;
	machine: string;
	project: ProjectRef;
	run_id: string | null;
	run_status: string;
	queued: boolean;
	runtime_mode: string;
	watched: boolean;
	origin: string | null;
	/** What T3 did with the message: started a run, queued it, steered or restarted the run. */
	delivered_as: "started" | "queued" | "steered" | "restarted";
	/** The thread's branch (as asked or assigned) and worktree; null until T3 says. */
	branch: string | null;
	worktree_path: string | null;
	/** The branch is T3's temporary `t3code/<8 hex>` name, which T3 renames once (workspace.ts). */
	branch_temporary: boolean;
	/** The thread this one was forked from, or null. */
	forked_from: string | null;
};

export async function dispatch(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
): Promise<DispatchResult> {
	checkPrompt(args.prompt);
	checkAttachments(args.attachments);
	const keyed = keyArgument(args);
	let held: ReturnType<typeof takeSlot>;
	try {
		if (keyed && deps.operations.get(TOOL, keyed.key) !== undefined)
			return await reuse(deps, args, keyed, origin);
		// A replay above starts nothing new; anything else may add a busy thread: its slot is
		// taken now, before the first await, so calls sent at once cannot all pass the cap.
		held = takeSlot(deps, args);
		const own = held ? { ...deps, slot: held.slot } : deps;
		const result = await route(own, args, origin, keyed?.key);
		held?.slot.sent();
		return result;
	} catch (error) {
		held?.settle();
		// The same key in two calls at once: the second one to record it (or to move a fork's
		// claim on) answers like a retry of the first.
		const code = String((error as { code?: unknown })?.code ?? "");
		if (
			keyed &&
			code.startsWith("SQLITE_CONSTRAINT") &&
			deps.operations.get(TOOL, keyed.key) !== undefined
		) {
			return reuse(deps, args, keyed, origin);
		}
		throw error;
	}
}

function route(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
	key: string | undefined,
): Promise<DispatchResult> {
	if (args.fork_of !== undefined) return dispatchFork(deps, args, origin, key);
	if (args.fork_run_id !== undefined)
		throw new ThreadError(
			"fork_run_id: only used with fork_of (the run of the source thread to fork from).",
		);
	return args.thread_id === undefined
		? launch(deps, args, origin, key)
		: continueThread(deps, args, args.thread_id, origin, key);
}

/**
 * The caller's slot under its caps (refused here when none is free), and how to settle it when
 * the dispatch fails: kept while its recorded command may have gone out (a send that timed
 * out), else given back.
 */
function takeSlot(
	deps: ThreadDeps,
	args: DispatchArgs,
): { slot: RunSlot; settle: () => void } | undefined {
	const name = deps.client?.name;
	const cap = clientCap(deps.client, () =>
		name === undefined ? [] : deps.threads.ofClient(name),
	);
	if (!cap) return undefined;
	const ledger = deps.slots ?? slotsOf(deps.fleet, deps.now);
	const located =
		args.thread_id !== undefined && args.fork_of === undefined
			? deps.fleet.locate(args.thread_id)
			: undefined;
	const taken = ledger.take(
		[cap],
		located && args.thread_id !== undefined
			? { threadId: args.thread_id, machine: located.entry.config.name }
			: undefined,
	);
	let commandId: string | undefined;
	return {
		slot: {
			...taken,
			bind(threadId, machine, command) {
				commandId = command;
				taken.bind(threadId, machine);
			},
		},
		settle() {
			if (commandId !== undefined && deps.dispatches.byCommandId(commandId))
				taken.sent();
			else taken.release();
		},
	};
}
