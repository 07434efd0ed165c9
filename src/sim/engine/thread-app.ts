/**
 * A thread's app row: the one `thread.create` and `launchThread` write for a new thread (a fork
 * copies its source's, thread-fork.ts), and the patch-plus-event every thread setting command
 * makes to it.
 */
import { BUSY_RUN_STATUSES } from "../../t3/model.ts";
import { newId, nowIso, type Row } from "./rows.ts";
import type { Store, ThreadState } from "./store.ts";

export function newThread(
	store: Store,
	input: Record<string, unknown>,
	creationSource: string,
): ThreadState {
	const id = String(input.threadId ?? `thread-${newId()}`);
	const modelSelection = input.modelSelection as Row;
	const at = nowIso();
	const app: Row = {
		createdBy: "user",
		creationSource,
		id,
		projectId: input.projectId,
		title: input.title,
		providerInstanceId: modelSelection?.instanceId ?? "codex",
		modelSelection,
		runtimeMode: input.runtimeMode,
		interactionMode: input.interactionMode,
		// launchThread creates the thread on the branch its workspaceStrategy names, before any
		// worktree exists (ThreadLaunchService `initialBranch`, idx 59486431798).
		branch:
			input.branch ??
			(input.workspaceStrategy as Row | undefined)?.branch ??
			null,
		worktreePath: input.worktreePath ?? null,
		activeProviderThreadId: null,
		lineage: {
			parentThreadId: null,
			relationshipToParent: null,
			rootThreadId: id,
		},
		forkedFrom: null,
		createdAt: at,
		updatedAt: at,
		archivedAt: null,
		settledOverride: null,
		settledAt: null,
		snoozedUntil: null,
		snoozedAt: null,
		deletedAt: null,
	};
	return store.createThread(app, {
		providerInstanceId: String(app.providerInstanceId),
	});
}

export function setApp(
	store: Store,
	thread: ThreadState,
	patch: Record<string, unknown>,
	type: string,
): number {
	thread.app = { ...thread.app, ...patch, updatedAt: nowIso() };
	return store.appendThreadEvent(thread, type, {
		providerInstanceId: String(thread.app.providerInstanceId),
	});
}

export function isBusy(thread: ThreadState): boolean {
	return thread.rows.runs.some((r) =>
		BUSY_RUN_STATUSES.has(r.status as string),
	);
}
