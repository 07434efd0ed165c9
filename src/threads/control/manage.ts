/**
 * Room `threads/control/`: the tools that change a thread or a machine after launch: `t3_answer`,
 * `t3_interrupt`, `t3_manage` (with queue control and preparation retry), `t3_delete`,
 * `t3_project_add`. May import `t3/`, `store/`, `util/`, the `threads/` root and
 * `threads/dispatch` (settings, prompt rules), `threads/wait` and `rights/` (the level a path is
 * held to); never `mcp/`, `tools/`, `http/`
 * or `cli/`.
 */
/**
 * `t3_manage`: the thread organisation commands of PROTOCOL.md §6.7–6.9
 * (metadata, archive, settle, provider-session detach, queue resume and control; `t3_delete`
 * is delete.ts). Nothing but a delete and a cancelled follow-up loses data. T3's refusals come back as errors saying what to do first.
 */
import { type Machine, T3Error } from "../../t3/machine-api.ts";
import {
	BUSY_RUN_STATUSES,
	type ThreadProjection,
	type ThreadShell,
} from "../../t3/model.ts";
import { redact } from "../../util/redact.ts";
import type { ThreadDeps } from "../deps.ts";
import { once } from "../dispatch/idempotency.ts";
import { ThreadError } from "../errors.ts";
import {
	type LocatedThread,
	locateThread,
	placeOf,
	readDetail,
} from "../locate.ts";
import { isUnsupported } from "../unsupported.ts";
import {
	isOrganizeAction,
	isPinned,
	ORGANIZE_ACTIONS,
	organizeCommand,
	organizeFirstStep,
	organizeUnsupported,
	snoozeTime,
} from "./organize.ts";
import { retryPreparation } from "./preparation-retry.ts";
import { type ResumeQueueResult, resumeQueue } from "./queue.ts";
import { orderQueuedRun } from "./queue-order.ts";
import { changeQueuedRun } from "./queued-run.ts";

export const MANAGE_ACTIONS = [
	"rename",
	"archive",
	"unarchive",
	"settle",
	"unsettle",
	"stop_session",
	"resume_queue",
	"retry_preparation",
	"cancel_queued",
	"edit_queued",
	"reorder_queued",
	"promote_queued",
	...ORGANIZE_ACTIONS,
] as const;
export type ManageAction = (typeof MANAGE_ACTIONS)[number];

export interface ManageResult {
	thread_id: string;
	action: ManageAction;
	status: string;
	title: string;
	archived: boolean;
	/** Whether T3 shows the thread pinned (false on a T3 without pins). */
	pinned: boolean;
	/** false when there was nothing to do (then `note` says why). */
	changed: boolean;
	note: string | null;
}

const REASON = "Requested through t3code-mcp";

/** The actions that take `run_id`. */
const RUN_ACTIONS: ReadonlySet<ManageAction> = new Set([
	"retry_preparation",
	"cancel_queued",
	"edit_queued",
	"reorder_queued",
	"promote_queued",
]);

function checkTitle(action: ManageAction, title: string | undefined): void {
	if (action === "rename" && (title === undefined || title.trim() === ""))
		throw new ThreadError(
			'title: required for action "rename" (the new title, non-empty).',
		);
	if (action !== "rename" && title !== undefined)
		throw new ThreadError(
			`title: only used with action "rename", not with "${action}". Leave it out.`,
		);
}

/** The commands one action sends (stop_session: one detach per attached provider session). */
function commandsFor(
	deps: ThreadDeps,
	threadId: string,
	action: ManageAction,
	title: string | undefined,
	projection: ThreadProjection,
	until: string | undefined,
): Record<string, unknown>[] {
	const base = { commandId: deps.newId(), threadId };
	if (isOrganizeAction(action))
		return [{ ...base, ...organizeCommand(action, until, deps.now()) }];
	switch (action) {
		case "rename":
			return [
				{ ...base, type: "thread.metadata.update", title: title?.trim() },
			];
		case "archive":
			return [{ ...base, type: "thread.archive" }];
		case "unarchive":
			return [{ ...base, type: "thread.unarchive" }];
		case "settle":
			return [{ ...base, type: "thread.settle" }];
		case "unsettle":
			return [{ ...base, type: "thread.unsettle", reason: "user" }];
		case "resume_queue": // queue.ts
		case "retry_preparation": // preparation-retry.ts
		case "cancel_queued": // queued-run.ts
		case "edit_queued":
		case "reorder_queued": // queue-order.ts
		case "promote_queued":
			return [];
		case "stop_session":
			return projection.providerSessions
				.filter((s) => s.status !== "stopped")
				.map((s) => ({
					type: "provider-session.detach",
					commandId: deps.newId(),
					threadId,
					providerSessionId: s.id,
					reason: REASON,
				}));
	}
}

/** What to do before T3 accepts the action, judged from the thread's state at the refusal. */
function firstStep(
	action: ManageAction,
	shell: ThreadShell | undefined,
	projection: ThreadProjection,
): string {
	if (isOrganizeAction(action))
		return organizeFirstStep(action, shell, projection);
	const pending =
		shell?.pendingRuntimeRequest != null ||
		projection.runtimeRequests.some((r) => r.status === "pending");
	const busy =
		(shell?.activeRunId ?? null) !== null ||
		projection.runs.some((r) => BUSY_RUN_STATUSES.has(r.status));
	// T3 refuses to settle while a request is pending; other actions do not depend on it.
	if (pending && action === "settle")
		return "A question or approval is pending: answer it with t3_answer (or stop the run with t3_interrupt) first, then retry.";
	if (busy && action === "archive")
		return "The agent is still working: wait for the run to end (t3_wait) or stop it (t3_interrupt) first, then archive.";
	// Repeating an action is refused; say that the thread is already where it was asked to go.
	if (action === "unarchive")
		return "If the thread is not archived, there is nothing to do.";
	if (action === "archive")
		return "If it is already archived, there is nothing to do (t3_threads with archived: true lists it).";
	if (action === "unsettle")
		return "If the thread is not settled, there is nothing to do.";
	if (action === "settle")
		return "If it is already settled, there is nothing to do.";
	return "Check the thread with t3_thread.";
}

function refusal(
	located: LocatedThread,
	action: ManageAction,
	error: T3Error,
	projection: ThreadProjection,
): ThreadError {
	const text = t3Reason(error);
	return new ThreadError(
		`T3 machine "${located.entry.config.name}" refused ${action} on thread "${located.threadId}": ${text} ${firstStep(action, located.shell, projection)}`,
	);
}

/** The most specific text of a T3 failure (a typed error's nested cause says why), redacted. */
export function t3Reason(error: T3Error): string {
	return redact(rawReason(error));
}

function rawReason(error: T3Error): string {
	const raw = error.detail?.raw as
		| { message?: unknown; cause?: { message?: unknown } }
		| undefined;
	const cause = raw?.cause?.message;
	return typeof cause === "string" && cause !== ""
		? cause
		: typeof raw?.message === "string"
			? raw.message
			: error.message;
}

function shapeOf(
	located: LocatedThread,
	action: ManageAction,
	projection: ThreadProjection,
	note: string | null,
): ManageResult {
	return {
		thread_id: located.threadId,
		action,
		status: projection.thread.status,
		title: projection.thread.title,
		archived: Boolean(projection.thread.archivedAt),
		// The live shell once it has caught up (shellCaughtUp); the projection for a thread it lacks.
		pinned: isPinned(
			located.entry.machine.thread(located.threadId) ?? projection.thread,
		),
		changed: note === null,
		note,
	};
}

async function describe(
	located: LocatedThread,
	action: ManageAction,
): Promise<ManageResult> {
	const { projection } = await located.entry.machine.getThread(
		located.threadId,
	);
	return shapeOf(located, action, projection, null);
}

/**
 * Why `action` would change nothing on the thread as it is, or null. T3 refuses such repeats;
 * saying so beats relaying a refusal. Settling is judged only where T3 reports
 * `settledOverride` (an engine without it decides itself).
 */
function nothingToDo(
	action: ManageAction,
	title: string | undefined,
	projection: ThreadProjection,
): string | null {
	const thread = projection.thread;
	const settled =
		"settledOverride" in thread
			? thread.settledOverride === "settled"
			: undefined;
	switch (action) {
		case "rename":
			return title?.trim() === thread.title
				? "The thread already has this title: nothing to do."
				: null;
		case "archive":
			return thread.archivedAt
				? "The thread is already archived: nothing to do (t3_threads with archived: true lists it)."
				: null;
		case "unarchive":
			return thread.archivedAt
				? null
				: "The thread is not archived: nothing to do.";
		case "settle":
			return settled === true
				? "The thread is already settled: nothing to do."
				: null;
		case "unsettle":
			return settled === false
				? "The thread is not settled: nothing to do."
				: null;
		case "stop_session":
			return projection.providerSessions.some((s) => s.status !== "stopped")
				? null
				: "No provider session is attached to this thread: nothing to stop.";
		case "resume_queue": // queue.ts
		case "retry_preparation": // preparation-retry.ts
		case "cancel_queued": // queued-run.ts
		case "edit_queued":
		case "reorder_queued": // queue-order.ts
		case "promote_queued":
			return null;
		// T3 takes a re-pin, an unpin or unsnooze of a thread as it is; whether it changes
		// anything is T3's to say (an engine without pins has no pinnedAt to judge by).
		case "pin":
		case "unpin":
		case "snooze":
		case "unsnooze":
		case "mark_unread":
			return null;
	}
}

/** The contract's `t3_manage` result from the queue use case's richer one. */
function manageShape(r: ResumeQueueResult): ManageResult {
	return {
		thread_id: r.thread_id,
		action: "resume_queue",
		status: r.status,
		title: r.title,
		archived: r.archived,
		pinned: r.pinned,
		changed: r.wasHeld,
		note: r.wasHeld
			? null
			: "No queued run of this thread was held (an interrupt with hold_queue or a T3 server restart holds them): nothing to resume.",
	};
}

/** The arguments of `t3_manage` beyond the thread and the action; each belongs to some actions. */
export interface ManageOptions {
	title?: string;
	/** The idempotency key. */
	key?: string;
	runId?: string;
	prompt?: string;
	/** `reorder_queued`: the queued run to move before; null or absent: last. */
	beforeRunId?: string | null;
	/** `snooze`: until when (ISO). */
	until?: string;
}

/** Refuses an argument given to an action that does not use it. */
function checkOnlyWith(action: ManageAction, o: ManageOptions): void {
	const only = (
		field: string,
		given: boolean,
		actions: readonly ManageAction[],
	) => {
		if (!given || actions.includes(action)) return;
		const names = actions.map((a) => `"${a}"`);
		const list =
			names.length > 1
				? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`
				: names[0];
		throw new ThreadError(
			`${field}: only used with action${names.length > 1 ? "s" : ""} ${list}, not with "${action}". Leave it out.`,
		);
	};
	only("run_id", o.runId !== undefined, [...RUN_ACTIONS]);
	only("prompt", o.prompt !== undefined, ["edit_queued"]);
	only("before_run_id", o.beforeRunId !== undefined, ["reorder_queued"]);
	only("until", o.until !== undefined, ["snooze"]);
}

/** `t3_manage`; with an idempotency key, a repeat returns the first result (idempotency.ts). */
export function manageThread(
	deps: ThreadDeps,
	threadId: string,
	action: ManageAction,
	options: ManageOptions = {},
): Promise<ManageResult> {
	const { title, key, runId, prompt, beforeRunId, until } = options;
	checkTitle(action, title);
	checkOnlyWith(action, options);
	// A snooze time in the past is refused before anything is read or sent.
	if (action === "snooze") snoozeTime(until, deps.now());
	const done = once(
		deps,
		{
			tool: "t3_manage",
			key,
			args: {
				thread_id: threadId,
				action,
				title,
				run_id: runId,
				prompt,
				before_run_id:
					action === "reorder_queued" ? (beforeRunId ?? null) : undefined,
				until,
			},
			threadId,
		},
		async () => {
			if (action === "resume_queue") {
				const resumed = await resumeQueue(deps, threadId);
				return {
					threadId,
					result: manageShape(resumed),
					place: resumed.place,
				};
			}
			const located = await locateThread(deps, threadId);
			const sequence = await sendRunAction(
				deps,
				located,
				action,
				runId,
				prompt,
				beforeRunId,
			);
			if (sequence !== undefined) {
				await shellCaughtUp(located.entry.machine, sequence);
				return {
					threadId,
					result: await describe(located, action),
					place: placeOf(located),
				};
			}
			return {
				threadId,
				result: await applyAction(deps, located, action, title, until),
				place: placeOf(located),
			};
		},
	);
	// A result an older version stored for this key has neither field: it did change something.
	return done.then((r) => {
		const stored = r as ManageResult & { result?: ManageResult; note?: string };
		const result = stored.result ?? stored;
		return {
			...result,
			pinned: result.pinned ?? false,
			changed: result.changed ?? true,
			note: result.note ?? stored.note ?? null,
		};
	});
}

/**
 * The actions on one run (retry its preparation, cancel, edit, reorder or promote it): sends
 * the command and answers the sequence T3 wrote it at; undefined for the other actions.
 */
function sendRunAction(
	deps: ThreadDeps,
	located: LocatedThread,
	action: ManageAction,
	runId: string | undefined,
	prompt: string | undefined,
	beforeRunId: string | null | undefined,
): Promise<number> | undefined {
	switch (action) {
		case "retry_preparation":
			return retryPreparation(deps, located, runId, t3Reason);
		case "cancel_queued":
		case "edit_queued":
			return changeQueuedRun(deps, located, action, runId, prompt, t3Reason);
		case "reorder_queued":
		case "promote_queued":
			return orderQueuedRun(
				deps,
				located,
				action,
				runId,
				beforeRunId,
				t3Reason,
			);
		default:
			return undefined;
	}
}

async function applyAction(
	deps: ThreadDeps,
	located: LocatedThread,
	action: ManageAction,
	title: string | undefined,
	until: string | undefined,
): Promise<ManageResult> {
	const { threadId } = located;
	const { projection } = await readDetail(located, true);
	const nothing = nothingToDo(action, title, projection);
	if (nothing !== null) return shapeOf(located, action, projection, nothing);
	const commands = commandsFor(
		deps,
		threadId,
		action,
		title,
		projection,
		until,
	);
	let sequence = 0;
	for (const command of commands) {
		try {
			({ sequence } = await located.entry.machine.dispatch(
				command as Record<string, unknown> & {
					type: string;
					commandId: string;
				},
			));
		} catch (error) {
			if (!(error instanceof T3Error)) throw error;
			if (isOrganizeAction(action) && isUnsupported(error))
				throw organizeUnsupported(
					located.entry.config.name,
					action,
					String(command.type),
				);
			if (error.code === "REJECTED")
				throw refusal(located, action, error, projection);
			throw error;
		}
	}
	await shellCaughtUp(located.entry.machine, sequence);
	return describe(located, action);
}

const CATCH_UP_MS = 3_000;

/**
 * Waits (bounded) until the machine's shell has applied the command's event, so a t3_threads
 * right after an archive or delete already reflects it.
 */
export function shellCaughtUp(
	machine: Machine,
	sequence: number,
): Promise<void> {
	if (machine.sequence() >= sequence) return Promise.resolve();
	return new Promise((resolve) => {
		const done = () => {
			clearTimeout(timer);
			off();
			resolve();
		};
		const timer = setTimeout(done, CATCH_UP_MS);
		const off = machine.onChange(() => {
			if (machine.sequence() >= sequence) done();
		});
	});
}
