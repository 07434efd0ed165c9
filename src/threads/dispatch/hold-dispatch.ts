/**
 * Holding a new thread's dispatch that cannot start yet (CONTRACT.md "One pool", "Holding"):
 * `when_busy` and `not_before`, the refusals (attachments, `not_before` over 7 days, `max_held`),
 * the row with its final thread id (and the idempotency key's claim, pointing at it), and the
 * answers a held dispatch gives: at once, and to a key used again (held, withdrawn, never
 * started). Starting it is held-start.ts's.
 */
import { DEFAULT_CLIENT } from "../../config/clients.ts";
import {
	type HeldShape,
	type Holding,
	NOT_BEFORE_MAX_MS,
} from "../../pool/hold.ts";
import {
	isMachinePattern,
	type Skipped,
	type SkipReason,
} from "../../pool/placement.ts";
import { newThreadMode } from "../../rights/run-limits.ts";
import type { HeldHead } from "../../store/held-store.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { titleFromPrompt } from "../shapes.ts";
import { operationArgs, TOOL } from "./claim.ts";
import type { DispatchArgs, DispatchResult } from "./dispatch.ts";
import { fingerprint } from "./idempotency.ts";

/** What a key's claim points at while its dispatch is held: `held:<thread id>`. */
export const HELD_REF = "held:";

/** Whether (and until when) a new thread's dispatch may be held instead of refused. */
export interface HoldPlan {
	/** `not_before` (epoch ms), or null. */
	notBefore: number | null;
	/** `not_before` is still ahead: held without looking for room. */
	waiting: boolean;
}

/**
 * `when_busy` and `not_before` checked; the plan when the dispatch would be held rather than
 * refused (a pattern or `not_before` by default, `when_busy: "hold"` explicitly), else undefined.
 */
export function holdPlan(
	deps: ThreadDeps,
	args: DispatchArgs,
): HoldPlan | undefined {
	const existing = args.thread_id !== undefined || args.fork_of !== undefined;
	if (existing && (args.not_before !== undefined || args.when_busy === "hold"))
		throw new ThreadError(
			`${args.not_before !== undefined ? "not_before" : 'when_busy: "hold"'}: only for a new thread; a continuation or fork is never held (a follow-up queues on T3 itself). Omit it with ${args.thread_id !== undefined ? "thread_id" : "fork_of"}.`,
		);
	let notBefore: number | null = null;
	if (args.not_before !== undefined) {
		const at = Date.parse(args.not_before);
		if (!Number.isFinite(at))
			throw new ThreadError(
				`not_before: "${args.not_before}" is not an ISO time; pass one like "2026-12-05T18:00:00Z".`,
			);
		const now = deps.now();
		if (at - now > NOT_BEFORE_MAX_MS)
			throw new ThreadError(
				`not_before: ${new Date(at).toISOString()} is more than 7 days ahead (the longest a dispatch is held); pass a time before ${new Date(now + NOT_BEFORE_MAX_MS).toISOString()}.`,
			);
		notBefore = Math.max(at, now);
	}
	if (existing || args.machine === undefined) return undefined;
	const whenBusy =
		args.when_busy ??
		(isMachinePattern(args.machine) || notBefore !== null ? "hold" : "refuse");
	if (whenBusy === "refuse") {
		if (notBefore !== null && notBefore > deps.now())
			throw new ThreadError(
				'not_before: a dispatch that waits for its time is held; omit when_busy or pass when_busy: "hold".',
			);
		return undefined;
	}
	if (!deps.holding) return undefined;
	return {
		notBefore,
		waiting: notBefore !== null && notBefore > deps.now(),
	};
}

/** The reason and detail a held dispatch starts with, from the candidates' skips. */
export function whyHeld(
	skipped: Skipped[],
	plan: HoldPlan,
): { reason: SkipReason; detail: string } {
	if (plan.waiting && plan.notBefore !== null)
		return {
			reason: "not_before",
			detail: `not before ${new Date(plan.notBefore).toISOString()}`,
		};
	const first =
		skipped.find((s) => s.reason === "machine_cap") ??
		skipped.find((s) => s.reason !== "no_project") ??
		skipped[0];
	return {
		reason: first?.reason ?? "machine_cap",
		detail:
			skipped
				.map((s) => `${s.machine}: ${s.reason} (${s.detail})`)
				.join("; ")
				.slice(0, 1_000) || "no machine has room yet",
	};
}

/** Holds the dispatch (its key claimed in the same transaction) and answers at once. */
export function holdDispatch(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
	keyed: { key: string; name: string } | undefined,
	plan: HoldPlan,
	why: { reason: SkipReason; detail: string },
	claimArgs: Record<string, unknown>,
): DispatchResult {
	const holding = deps.holding as Holding;
	if (args.attachments && args.attachments.length > 0)
		throw new ThreadError(
			'attachments: a dispatch with attachments is never held (a held prompt must not keep files in the server\'s state). Put the files in the project and name them in the prompt, or pass when_busy: "refuse" and try again when a machine has room.',
		);
	// Refused now, not when it starts: a mode above the client's level.
	const runtimeMode = newThreadMode(deps.client, args.runtime_mode);
	const threadId = deps.newId();
	const {
		machine: _m,
		project: _p,
		idempotency_key: _k,
		request_id: _r,
		attachments: _a,
		when_busy: _w,
		not_before: _n,
		placed_from: _f,
		...rest
	} = args;
	const machine = args.machine as string;
	const project = args.project as string;
	const now = deps.now();
	let head: HeldHead | undefined;
	deps.db.transaction(() => {
		head = holding.hold(
			{
				thread_id: threadId,
				client: deps.client?.name ?? DEFAULT_CLIENT,
				machine,
				named: isMachinePattern(machine) ? 0 : 1,
				project,
				title: args.title?.trim() || titleFromPrompt(args.prompt),
				args: JSON.stringify(rest),
				origin,
				key: keyed?.key ?? null,
				since: now,
				not_before: plan.notBefore,
			},
			why.reason,
			why.detail,
		);
		if (keyed)
			deps.operations.insert({
				tool: TOOL,
				key: keyed.key,
				args: fingerprint(claimArgs),
				thread_id: threadId,
				ref: `${HELD_REF}${threadId}`,
				created_at: now,
			});
	})();
	// Its time is a timer of the drain's.
	if (plan.notBefore !== null) deps.drain?.trigger("all");
	return heldResult(deps, head as HeldHead, runtimeMode);
}

/** The arguments a held dispatch's key claims: as given (a pattern and a project as named). */
export const heldClaimArgs = (args: DispatchArgs) => operationArgs(args);

/** A held dispatch's answer (`t3_dispatch`, and a key used again). */
export function heldResult(
	deps: ThreadDeps,
	head: HeldHead,
	runtimeMode?: string,
): DispatchResult {
	const holding = deps.holding as Holding;
	const stored = JSON.parse(holding.args(head.thread_id) ?? "{}") as {
		watch?: boolean;
		runtime_mode?: string;
	};
	const open = holding.isOpen(head.thread_id);
	const status =
		head.status === "withdrawn" || head.status === "never_started"
			? head.status
			: "held";
	return {
		thread_id: head.thread_id,
		machine: head.named ? head.machine : null,
		project: { id: null, title: head.project, path: null },
		run_id: null,
		run_status: status,
		queued: false,
		runtime_mode: runtimeMode ?? modeOf(deps, stored.runtime_mode),
		watched: stored.watch ?? true,
		origin: head.origin,
		delivered_as: "held",
		branch: null,
		worktree_path: null,
		branch_temporary: false,
		forked_from: null,
		placement: null,
		held: open ? holding.shape(head) : null,
	};
}

/** The mode a held dispatch will run at (its client's level may have changed since). */
function modeOf(deps: ThreadDeps, asked: string | undefined): string {
	try {
		return newThreadMode(deps.client, asked);
	} catch {
		return asked ?? "full-access";
	}
}

/** Whether a refusal means "no room now" (held instead when the plan allows). */
export function noRoomNow(error: unknown): boolean {
	const code = (error as { code?: unknown } | null)?.code;
	return code === "no_capacity" || code === "max_active_runs_reached";
}

export type { HeldShape };
