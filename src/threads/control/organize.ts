/**
 * `t3_manage` `pin` / `unpin` / `snooze` / `unsnooze` / `mark_unread`: T3's thread organisation
 * commands (USAGE-AND-QUEUES.md §3: `thread.pin`, `thread.unpin`, `thread.snooze {snoozedUntil}`,
 * `thread.unsnooze {reason: "user"}`, `thread.mark-unread`). None is held to the thread's mode;
 * a snooze time in the past is refused before anything is sent, and a T3 without the command
 * (the pre-release has no pins nor read state) is said plainly, naming the machine.
 */
import type { ThreadProjection, ThreadShell } from "../../t3/model.ts";
import { ThreadError } from "../errors.ts";
import { unsupportedError } from "../unsupported.ts";

export const ORGANIZE_ACTIONS = [
	"pin",
	"unpin",
	"snooze",
	"unsnooze",
	"mark_unread",
] as const;
export type OrganizeAction = (typeof ORGANIZE_ACTIONS)[number];

export const isOrganizeAction = (action: string): action is OrganizeAction =>
	(ORGANIZE_ACTIONS as readonly string[]).includes(action);

/** `until` as T3 takes it (ISO, UTC), refused unless it is a time in the future. */
export function snoozeTime(until: string | undefined, now: number): string {
	if (until === undefined)
		throw new ThreadError(
			'until: required for action "snooze" (an ISO time in the future, e.g. "2030-01-02T09:00:00Z").',
		);
	const at = Date.parse(until);
	if (Number.isNaN(at) || !/^\d{4}-\d{2}-\d{2}T/.test(until))
		throw new ThreadError(
			`until: "${until}" is not an ISO time; give one like "2030-01-02T09:00:00Z".`,
		);
	if (at <= now)
		throw new ThreadError(
			`until: ${new Date(at).toISOString()} is in the past; T3 snoozes a thread only until a time in the future. Give a later time (to wake a snoozed thread, use action "unsnooze").`,
		);
	return new Date(at).toISOString();
}

/** The command's type and fields beyond `commandId` and `threadId`. */
export function organizeCommand(
	action: OrganizeAction,
	until: string | undefined,
	now: number,
): Record<string, unknown> & { type: string } {
	switch (action) {
		case "pin":
			return { type: "thread.pin" };
		case "unpin":
			return { type: "thread.unpin" };
		case "snooze":
			return { type: "thread.snooze", snoozedUntil: snoozeTime(until, now) };
		case "unsnooze":
			return { type: "thread.unsnooze", reason: "user" };
		case "mark_unread":
			return { type: "thread.mark-unread" };
	}
}

/** What to do before T3 takes the action, judged from the thread's state at the refusal. */
export function organizeFirstStep(
	action: OrganizeAction,
	shell: ThreadShell | undefined,
	projection: ThreadProjection,
): string {
	if (projection.thread.archivedAt || shell?.archivedAt)
		return 'The thread is archived: unarchive it first (t3_manage action "unarchive"), then retry.';
	if (action === "snooze") {
		if (
			shell?.pendingRuntimeRequest != null ||
			projection.runtimeRequests.some((r) => r.status === "pending")
		)
			return "A question or approval is pending: answer it with t3_answer first, then snooze.";
		if (projection.runs.some((r) => r.status === "queued"))
			return 'Follow-ups are queued: let them run (t3_wait), or drop them with action "cancel_queued", then snooze.';
		return "Check the time in until and the thread with t3_thread.";
	}
	if (action === "mark_unread")
		return "T3 marks a thread unread only once one of its runs has completed: wait for one (t3_wait), then retry.";
	return "Check the thread with t3_thread.";
}

/** T3 died on the command: this machine's T3 predates it. */
export function organizeUnsupported(
	machine: string,
	action: OrganizeAction,
	type: string,
): ThreadError {
	return unsupportedError(
		machine,
		`${action.replace("_", " ")} on threads`,
		type,
		`its T3 lacks the ${action} action; nothing was changed.`,
	);
}

/** Whether T3 shows the thread pinned (`pinnedAt`); a T3 without pins never sends it. */
export function isPinned(thread: ThreadShell | undefined): boolean {
	const at = thread?.pinnedAt;
	return typeof at === "string" && at.length > 0;
}
