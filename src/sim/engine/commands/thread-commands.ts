/**
 * The commands that change a thread itself (PROTOCOL.md §6): its modes, model and metadata,
 * archiving, settling, snoozing, deleting, and detaching its provider session. Each writes
 * one thread event or is refused; none starts a run.
 */
import type { CommandHandler } from "../engine-core.ts";
import { nowIso } from "../rows.ts";
import { dropRun, threadHandles } from "../run-queue.ts";
import { detachSession } from "../session-detach.ts";
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
	"thread.snooze": ({ store }, thread, c) =>
		setApp(
			store,
			thread,
			{ snoozedUntil: String(c.snoozedUntil), snoozedAt: nowIso() },
			"thread.snoozed",
		),
	"thread.unsnooze": ({ store }, thread) =>
		setApp(
			store,
			thread,
			{ snoozedUntil: null, snoozedAt: null },
			"thread.unsnoozed",
		),
};
