/**
 * A keyed `t3_dispatch`'s claim: the idempotency key with the canonical arguments it is recorded
 * under (a fingerprint of every argument but the key), and the refs a keyed fork's claim points
 * at until its message is recorded.
 */
import { attachmentsClaim } from "./attachments.ts";
import type { DispatchArgs } from "./dispatch.ts";
import { fingerprint } from "./idempotency.ts";

/** The tool the operations table files `t3_dispatch` keys under. */
export const TOOL = "t3_dispatch";

/** An idempotency key and the canonical arguments it is claimed with. */
export interface Claim {
	key: string;
	args: string;
	/** A keyed fork's: the claim already exists and points at the fork (`FORK_REF`). */
	from?: string;
}

/**
 * What a keyed fork's claim points at until its message is recorded: the `thread.fork`
 * command. A retry then re-sends that fork (T3 forks once per commandId) and only the message.
 */
export const FORK_REF = "thread.fork:";
/** The same, once T3 confirmed the fork: from then on a 404 for it means it was deleted. */
export const FORKED_REF = "thread.forked:";

/**
 * Every argument except the key, with `project` as given (resolved later where it can be); a
 * placed dispatch's `machine` and `project` as the caller gave them (the pattern), so a retry
 * with the same key matches wherever the first call landed.
 */
export function operationArgs(args: DispatchArgs): Record<string, unknown> {
	const { idempotency_key: _, request_id: __, placed_from, ...rest } = args;
	return {
		...rest,
		...(placed_from ?? {}),
		attachments: attachmentsClaim(args.attachments),
	};
}

/** The claim a keyed dispatch records, its project resolved to `projectId`. */
export function claimFor(
	args: DispatchArgs,
	key: string | undefined,
	projectId: string,
): Claim | undefined {
	if (key === undefined) return undefined;
	const resolved = operationArgs(args);
	if (resolved.project !== undefined && args.placed_from === undefined)
		resolved.project = projectId;
	return { key, args: fingerprint(resolved) };
}
