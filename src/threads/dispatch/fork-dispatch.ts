/**
 * `t3_dispatch` with `fork_of`: fork the source thread (fork.ts), then run the prompt in the new
 * thread as a continuation. A keyed fork claims its key before the fork is sent, so a retry
 * re-sends that same fork and never makes a second one.
 */
import { checkThreadPath } from "../../rights/run-limits.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { locateThread } from "../locate.ts";
import { knownGone } from "../wait/vanish.ts";
import { type Claim, claimFor, FORK_REF, FORKED_REF, TOOL } from "./claim.ts";
import { continueThread } from "./continue.ts";
import type { DispatchArgs, DispatchResult } from "./dispatch.ts";
import { forkThread } from "./fork.ts";
import { goneKeyError } from "./idempotency.ts";
import { refuseWorkspaceArgs } from "./workspace.ts";

/**
 * A fork: `thread.fork` makes the new thread (fork.ts), then the prompt runs in it as a
 * continuation would. The key claims the arguments as given (with fork_of, not the new id),
 * before the fork is sent: a retry after a failure between the fork and the message re-sends
 * that same fork (`pending`) and only then the message, so one key never makes two forks.
 */
export async function dispatchFork(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
	key: string | undefined,
	/** An earlier attempt's: its ids, the claim's current ref, the key's argument name. */
	pending?: {
		targetId: string;
		commandId: string;
		ref: string;
		keyName: string;
	},
): Promise<DispatchResult> {
	if (args.thread_id !== undefined)
		throw new ThreadError(
			"fork_of: not used with thread_id (a fork is a new thread). Pass one of them.",
		);
	refuseWorkspaceArgs(
		args,
		"a fork works where its source thread does (its branch and worktree).",
	);
	// A fork takes its source's modes: held to the client's level before T3 makes it.
	const source = async (fork_of: string) => {
		const located = await locateThread(deps, fork_of);
		checkThreadPath(
			deps.client,
			"dispatch",
			fork_of,
			located.shell?.runtimeMode,
			args.runtime_mode,
		);
		return located;
	};
	let claim: Claim | undefined;
	const forked = await forkThread(deps, args, source, {
		ids: pending,
		before: (projectId, targetId, commandId) => {
			const fresh = claimFor(args, key, projectId);
			if (!fresh) return;
			const from = pending?.ref ?? FORK_REF + commandId;
			if (!pending)
				deps.operations.insert({
					tool: TOOL,
					key: fresh.key,
					args: fresh.args,
					thread_id: targetId,
					ref: from,
					created_at: deps.now(),
				});
			claim = { ...fresh, from };
		},
	}).catch((error: unknown) => {
		if (!claim?.from) throw error;
		// Refused: nothing was forked, so the key is free again and a retry forks once.
		if (error instanceof ThreadError) {
			deps.operations.removeRef(TOOL, claim.from);
			throw error;
		}
		if (error instanceof T3Error)
			throw new ThreadError(
				`fork_of: the machine did not confirm forking thread "${args.fork_of}" (${error.message}). The fork may have been made: call t3_dispatch again with the same idempotency_key to finish it safely (the same fork, never a second one).`,
			);
		throw error;
	});
	if (claim?.from?.startsWith(FORK_REF)) {
		// Confirmed: a retry that finds it gone knows it was deleted (see `reuse`).
		const confirmed = FORKED_REF + claim.from.slice(FORK_REF.length);
		if (deps.operations.moveRef(TOOL, claim.key, claim.from, confirmed))
			claim.from = confirmed;
	}
	// A re-sent fork T3 took (it forks once per commandId) yet does not have: deleted.
	if (
		pending &&
		claim &&
		(await knownGone(deps, forked.targetId, forkMachine(deps, args)))
	)
		throw goneKeyError(pending.keyName, claim.key, forked.targetId);
	const { fork_of: _, fork_run_id: __, title: ___, ...rest } = args;
	const result = await continueThread(
		deps,
		{ ...rest, machine: undefined, project: undefined },
		forked.targetId,
		origin,
		key,
		claim ?? claimFor(args, key, forked.projectId),
	);
	return { ...result, forked_from: args.fork_of ?? null };
}

/** The machine a fork lives on (its source's), when the shells say; else undefined. */
export function forkMachine(
	deps: ThreadDeps,
	args: DispatchArgs,
): string | undefined {
	return args.fork_of === undefined
		? undefined
		: deps.fleet.locate(args.fork_of)?.entry.config.name;
}
