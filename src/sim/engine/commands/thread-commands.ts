/**
 * The commands that change a thread itself (PROTOCOL.md §6): its modes, model and metadata,
 * archiving, settling, snoozing, pinning, marking unread (USAGE-AND-QUEUES.md §3), deleting,
 * and detaching its provider session. Each writes
 * one thread event or is refused; none starts a run.
 */
import type { CommandHandler } from "../engine-core.ts";
import { nowIso } from "../rows.ts";
import { dropRun, threadHandles } from "../run-queue.ts";
import { detachSession } from "../session-detach.ts";
import type { ThreadState } from "../store.ts";
import { isBusy, setApp } from "../thread-app.ts";

export const THREAD_COMMANDS: Record<string, CommandHandler> = {
	"thread.runtime-mode.set": ({ store }, thread, c) =>
		setApp(
			store,
			thread,
			{ runtimeMode: c.runtimeMode },
			"thread.runtime-mode-updated",
		),
	"thread.interaction-mode.set": ({ store }, thread, c) =>
		setApp(
			store,
			thread,
			{ interactionMode: c.interactionMode },
			"thread.interaction-mode-updated",
		),
	"thread.model-selection.set": ({ store }, thread, c) =>
		setApp(
			store,
			thread,
			{ modelSelection: c.modelSelection },
			"thread.model-selection-updated",
		),
	"thread.metadata.update": ({ store }, thread, c) => {
		const patch: Record<string, unknown> = {};
		for (const key of ["title", "branch", "worktreePath"])
			if (c[key] !== undefined) patch[key] = c[key];
		return setApp(store, thread, patch, "thread.metadata-updated");
	},
	"thread.archive": ({ store }, thread, c) => {
		const threadId = String(c.threadId);
		if (isBusy(thread))
			return `Thread ${threadId} cannot be archived while it is working.`;
		// A command that would write no event is rejected (PROTOCOL.md §6.1).
		if (thread.app.archivedAt) return `Thread ${threadId} is already archived.`;
		return setApp(store, thread, { archivedAt: nowIso() }, "thread.archived");
	},
	"thread.unarchive": ({ store }, thread, c) => {
		if (!thread.app.archivedAt)
			return `Thread ${String(c.threadId)} is not archived.`;
		return setApp(store, thread, { archivedAt: null }, "thread.unarchived");
	},
	"thread.settle": ({ store }, thread, c) => {
		const threadId = String(c.threadId);
		if (thread.rows.runtimeRequests.some((r) => r.status === "pending"))
			return `Thread ${threadId} cannot be settled while a runtime request is pending.`;
		if (thread.app.settledOverride === "settled")
			return `Thread ${threadId} is already settled.`;
		return setApp(
			store,
			thread,
			{
				settledOverride: "settled",
				settledAt: typeof c.settledAt === "string" ? c.settledAt : nowIso(),
			},
			"thread.settled",
		);
	},
	"thread.unsettle": ({ store }, thread, c) => {
		if (thread.app.settledOverride !== "settled")
			return `Thread ${String(c.threadId)} is not settled.`;
		return setApp(
			store,
			thread,
			{ settledOverride: "active", settledAt: null, unsettledAt: nowIso() },
			"thread.unsettled",
		);
	},
	"provider-session.detach": ({ store }, thread, c) =>
		detachSession(
			store,
			thread,
			String(c.providerSessionId),
			c.reason === undefined ? undefined : String(c.reason),
		),
	"thread.delete": (core, thread) => {
		// The delete is the command's event; runs still going are cancelled in reaction to it.
		setApp(core.store, thread, { deletedAt: nowIso() }, "thread.deleted");
		for (const h of threadHandles(core, thread)) dropRun(core, h);
		return core.store.head();
	},
	"thread.snooze": ({ store }, thread, c) => {
		const refused = snoozeRefusal(thread, String(c.snoozedUntil));
		if (refused) return refused;
		return setApp(
			store,
			thread,
			{ snoozedUntil: String(c.snoozedUntil), snoozedAt: nowIso() },
			"thread.snoozed",
		);
	},
	"thread.unsnooze": ({ store }, thread) =>
		setApp(
			store,
			thread,
			{ snoozedUntil: null, snoozedAt: null },
			"thread.unsnoozed",
		),
	// A pin clears settled and snooze; a re-pin keeps its order key (USAGE-AND-QUEUES.md §3).
	"thread.pin": ({ store }, thread, c) => {
		if (thread.app.archivedAt)
			return `Thread ${thread.id} is archived and cannot be pinned.`;
		const key =
			thread.app.pinOrderKey ??
			(typeof c.orderKey === "string"
				? c.orderKey
				: `a${Date.now().toString(36)}`);
		return setApp(
			store,
			thread,
			{
				pinnedAt: thread.app.pinnedAt ?? nowIso(),
				pinOrderKey: key,
				settledOverride: null,
				settledAt: null,
				snoozedUntil: null,
				snoozedAt: null,
			},
			"thread.pinned",
		);
	},
	"thread.unpin": ({ store }, thread) =>
		setApp(
			store,
			thread,
			{ pinnedAt: null, pinOrderKey: null },
			"thread.unpinned",
		),
	"thread.mark-unread": ({ store }, thread) => {
		const completed = thread.rows.runs
			.filter((r) => r.status === "completed" && r.completedAt)
			.map((r) => Date.parse(String(r.completedAt)))
			.sort((a, b) => b - a)[0];
		if (completed === undefined)
			return `Thread ${thread.id} has no completed run to mark unread.`;
		return setApp(
			store,
			thread,
			{ lastVisitedAt: new Date(completed - 1).toISOString() },
			"thread.marked-unread",
		);
	},
};

/** Why T3 refuses to snooze the thread until `until`, or undefined. */
function snoozeRefusal(thread: ThreadState, until: string): string | undefined {
	const at = Date.parse(until);
	if (Number.isNaN(at) || at <= Date.now())
		return `Snooze time ${until} must be in the future.`;
	if (thread.app.archivedAt)
		return `Thread ${thread.id} is archived and cannot be snoozed.`;
	if (thread.rows.runtimeRequests.some((r) => r.status === "pending"))
		return `Thread ${thread.id} cannot be snoozed while a runtime request is pending.`;
	if (thread.rows.runs.some((r) => r.status === "queued"))
		return `Thread ${thread.id} cannot be snoozed while it has a queued run.`;
	return undefined;
}
