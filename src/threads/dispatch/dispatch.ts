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

import type { FleetMachine } from "../../fleet/fleet.ts";
import { machineCap } from "../../pool/capacity.ts";
import type { HeldShape } from "../../pool/hold.ts";
import {
	isMachinePattern,
	type PlaceInput,
	type Placement,
	place,
	type Skipped,
	skippedOf,
} from "../../pool/placement.ts";
import { clientCap } from "../../rights/run-limits.ts";
import { type RunCap, type RunSlot, slotsOf } from "../../rights/run-slots.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { chooseModel } from "../resolve.ts";
import type { ProjectRef } from "../shapes.ts";
import { type AttachmentArg, checkAttachments } from "./attachments.ts";
import { operationArgs, TOOL } from "./claim.ts";
import { continueThread } from "./continue.ts";
import { dispatchFork } from "./fork-dispatch.ts";
import {
	type HoldPlan,
	holdDispatch,
	holdPlan,
	noRoomNow,
	whyHeld,
} from "./hold-dispatch.ts";
import { keyArgument } from "./idempotency.ts";
import { launch } from "./launch.ts";
import { checkPrompt } from "./prompt.ts";
import { projectId, reuse } from "./reuse.ts";
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
	/**
	 * When no machine has room now: `hold` (the default for a pattern or with `not_before`) or
	 * `refuse` (the default for a named machine), hold-dispatch.ts.
	 */
	when_busy?: "hold" | "refuse";
	/** Not started before this ISO time (≤ 7 days ahead; in the past = now): held until then. */
	not_before?: string;
	/** Set by placement: `machine` (the pattern) and `project` as given, which a key claims. */
	placed_from?: { machine: string; project: string };
}

export type DispatchResult = {
	thread_id: string;
	/** Null while a dispatch for a pattern is held. */
	machine: string | null;
	/** Its id and path null while held (the title as given). */
	project: ProjectRef | { id: null; title: string; path: null };
	run_id: string | null;
	run_status: string;
	queued: boolean;
	runtime_mode: string;
	watched: boolean;
	origin: string | null;
	/** What T3 did with the message: started a run, queued it, steered or restarted the run. */
	delivered_as: "started" | "queued" | "steered" | "restarted" | "held";
	/** The thread's branch (as asked or assigned) and worktree; null until T3 says. */
	branch: string | null;
	worktree_path: string | null;
	/** The branch is T3's temporary `t3code/<8 hex>` name, which T3 renames once (workspace.ts). */
	branch_temporary: boolean;
	/** The thread this one was forked from, or null. */
	forked_from: string | null;
	/** Where a `machine` pattern placed the new thread and why (pool/placement.ts); null for a named machine. */
	placement: Placement | null;
	/** A held dispatch: where it stands (pool/hold.ts); null once started, and for any other. */
	held?: HeldShape | null;
};

export async function dispatch(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
): Promise<DispatchResult> {
	checkPrompt(args.prompt);
	checkAttachments(args.attachments);
	const keyed = keyArgument(args);
	let held: ReturnType<typeof takeSlot> | undefined;
	try {
		if (keyed && deps.operations.get(TOOL, keyed.key) !== undefined)
			return withPlacement(await reuse(deps, args, keyed, origin), null);
		const plan = holdPlan(deps, args);
		// A machine still connecting has no room yet: give it a moment to synchronize.
		await settleConnecting(deps, args);
		if (plan?.waiting) {
			surveyPlace(deps, args);
			return await hold(deps, args, origin, keyed, plan, []);
		}
		// A replay above starts nothing new; anything else may add a busy thread: its slot is
		// taken now, before the first await, so calls sent at once cannot all pass the cap (a
		// pattern is placed in the same synchronous stretch). With holding, a named machine is
		// judged as placement judges one (room includes usage and the provider).
		try {
			held = takeSlot(deps, args, plan !== undefined);
		} catch (error) {
			if (plan && noRoomNow(error))
				return await hold(
					deps,
					args,
					origin,
					keyed,
					plan,
					skippedOf(error) ?? [],
				);
			throw error;
		}
		const own = { ...deps, slot: held.slot };
		const result = await route(own, held.args, origin, keyed?.key);
		held.slot.sent();
		return withPlacement(result, held.placement);
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
			return withPlacement(await reuse(deps, args, keyed, origin), null);
		}
		throw error;
	}
}

/** Holds the dispatch; its key claims the arguments as a retry would resolve them. */
async function hold(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
	keyed: { key: string; name: string } | undefined,
	plan: HoldPlan,
	skipped: Skipped[],
): Promise<DispatchResult> {
	const claimArgs = operationArgs(args);
	if (keyed && typeof claimArgs.project === "string")
		claimArgs.project = await projectId(deps, args, claimArgs.project);
	return holdDispatch(
		deps,
		args,
		origin,
		keyed,
		plan,
		whyHeld(skipped, plan),
		claimArgs,
	);
}

/**
 * Whether the dispatch could ever start (for one held until `not_before`): a pattern that matches
 * no reached machine, or a project none of them has, is refused now; no room now is fine.
 */
function surveyPlace(deps: ThreadDeps, args: DispatchArgs): void {
	try {
		place(placeInput(deps, args, args.machine as string));
	} catch (error) {
		if (!noRoomNow(error)) throw error;
	}
}

const withPlacement = (
	result: Omit<DispatchResult, "placement"> & { placement?: Placement | null },
	placement: Placement | null,
): DispatchResult => ({
	...result,
	placement: placement ?? result.placement ?? null,
	held: result.held ?? null,
});

/** The machines a dispatch may land on that are still connecting: waited for, briefly. */
async function settleConnecting(
	deps: ThreadDeps,
	args: DispatchArgs,
): Promise<void> {
	if (args.thread_id !== undefined || args.fork_of !== undefined) return;
	if (args.machine === undefined) return;
	const entries = isMachinePattern(args.machine)
		? deps.fleet.list()
		: [deps.fleet.get(args.machine)];
	const waits: Promise<unknown>[] = [];
	for (const e of entries)
		if (e?.machine.status().state === "connecting")
			waits.push(e.machine.ready(SETTLE_MS).catch(() => {}));
	if (waits.length > 0) await Promise.all(waits);
}

const SETTLE_MS = 2_000;

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
 * out), else given back. A `machine` pattern is placed here (pool/placement.ts), in the same
 * synchronous stretch as the slot: the arguments then name the machine and project chosen.
 */
export function takeSlot(
	deps: ThreadDeps,
	args: DispatchArgs,
	placeNamed = false,
): {
	slot: RunSlot;
	settle: () => void;
	args: DispatchArgs;
	placement: Placement | null;
} {
	const client = clientCapOf(deps);
	const ledger = deps.slots ?? slotsOf(deps.fleet, deps.now);
	let caps: RunCap[];
	let target: { threadId: string; machine: string } | undefined;
	let placement: Placement | null = null;
	let routed = args;
	const pattern = args.machine !== undefined && isMachinePattern(args.machine);
	const newThread = args.thread_id === undefined && args.fork_of === undefined;
	if (args.machine !== undefined && (pattern || (placeNamed && newThread))) {
		if (args.thread_id !== undefined || args.fork_of !== undefined)
			throw new ThreadError(
				`machine: a pattern ("${args.machine}") places a new thread only; omit machine when passing ${args.thread_id !== undefined ? "thread_id" : "fork_of"}.`,
			);
		if (args.project === undefined)
			throw new ThreadError(
				"project: required to start a new thread (a project title or path when machine is a pattern; see t3_projects).",
			);
		const placed = place(placeInput(deps, args, args.machine));
		caps = placed.caps;
		// A named machine judged as placement judges one: no placement to show.
		placement = pattern ? placed.placement : null;
		routed = pattern
			? {
					...args,
					machine: placed.entry.config.name,
					project: placed.project.id,
					placed_from: { machine: args.machine, project: args.project },
				}
			: args;
	} else {
		const located =
			args.thread_id !== undefined && args.fork_of === undefined
				? deps.fleet.locate(args.thread_id)
				: undefined;
		const entry =
			args.fork_of !== undefined
				? deps.fleet.locate(args.fork_of)?.entry
				: args.thread_id !== undefined
					? located?.entry
					: args.machine === undefined
						? undefined
						: deps.fleet.get(args.machine);
		caps = [...(client ? [client] : []), ...machineCaps(entry)];
		if (located && args.thread_id !== undefined)
			target = {
				threadId: args.thread_id,
				machine: located.entry.config.name,
			};
	}
	const taken = ledger.take(caps, target);
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
		args: routed,
		placement,
	};
}

/** What placement needs for this dispatch and caller (the client's cap, the ledger, now). */
export function placeInput(
	deps: ThreadDeps,
	args: DispatchArgs,
	pattern: string,
): PlaceInput {
	return {
		pattern,
		fleet: deps.fleet,
		project: args.project as string,
		providerFor: (entry, project) =>
			chooseModel(entry, args.model, project, undefined)?.instanceId ?? null,
		ledger: deps.slots ?? slotsOf(deps.fleet, deps.now),
		clientCap: clientCapOf(deps),
		now: deps.now(),
	};
}

const clientCapOf = (deps: ThreadDeps): RunCap | null => {
	const name = deps.client?.name;
	return clientCap(deps.client, () =>
		name === undefined ? [] : deps.threads.ofClient(name),
	);
};

/**
 * The named machine's cap: none while it is unknown (the route refuses it); a capped machine
 * not online has no room until its shell has synchronized again.
 */
function machineCaps(entry: FleetMachine | undefined): RunCap[] {
	if (!entry) return [];
	const cap = machineCap(entry);
	const status = entry.machine.status();
	if (Number.isFinite(cap.cap) && status.state !== "online")
		throw new ThreadError(
			`Machine "${entry.config.name}" is ${status.state}${status.reason ? `: ${status.reason}` : ""}; it has no room (max_active_runs) until its shell has synchronized. Check t3_machines for every machine's state.`,
		);
	return [cap];
}
