/**
 * The rows a newly accepted run writes, in the real engine's order (captures-v2 ws-busy /
 * ws-continuation): provider thread, run, attempt, root node, checkpoint scope, user message
 * and its turn item, plus the "Preparing workspace" item for launchThread (OBSERVED.md §5.2).
 */
import {
	attemptIdFor,
	checkpointScopeIdFor,
	nowIso,
	providerItemIdFor,
	providerSessionIdFor,
	providerThreadIdFor,
	type Row,
	rootNodeIdFor,
	runIdFor,
} from "../engine/rows.ts";
import type { ThreadState } from "../engine/store.ts";
import {
	addItem,
	type NewRunInput,
	put,
	type RunHandle,
	type RunKit,
} from "./run-rows.ts";

export function createRun(
	kit: RunKit,
	thread: ThreadState,
	input: NewRunInput,
): { handle: RunHandle; sequence: number } {
	const { store } = kit;
	const ordinal = thread.rows.runs.length + 1;
	const runId = runIdFor(thread.id, ordinal);
	const instanceId = String(
		input.modelSelection.instanceId ?? thread.app.providerInstanceId ?? "codex",
	);
	const at = nowIso();
	let providerThread = thread.rows.providerThreads[0];
	const rootNodeId = rootNodeIdFor(runId);
	const attemptId = attemptIdFor(runId);
	const providerThreadId =
		(providerThread?.id as string | undefined) ??
		providerThreadIdFor(instanceId, runId);
	const run: Row = {
		id: runId,
		threadId: thread.id,
		ordinal,
		providerInstanceId: instanceId,
		modelSelection: input.modelSelection,
		providerThreadId,
		userMessageId: input.messageId,
		rootNodeId,
		activeAttemptId: attemptId,
		status: input.status,
		queuePosition:
			input.status === "queued"
				? thread.rows.runs.filter((r) => r.status === "queued").length + 1
				: null,
		requestedAt: at,
		startedAt: null,
		completedAt: null,
		checkpointId: null,
		contextHandoffId: null,
	};
	const handle: RunHandle = {
		thread,
		run,
		attempt: {
			id: attemptId,
			runId,
			attemptOrdinal: 1,
			rootNodeId,
			providerInstanceId: instanceId,
			providerThreadId,
			providerTurnId: null,
			reason: "initial",
			status: "pending",
			startedAt: null,
			completedAt: null,
		},
		node: {
			id: rootNodeId,
			threadId: thread.id,
			runId,
			parentNodeId: null,
			rootNodeId,
			kind: "root_turn",
			status: "pending",
			countsForRun: true,
			providerThreadId,
			providerTurnId: null,
			nativeItemRef: null,
			runtimeRequestId: null,
			checkpointScopeId: null,
			startedAt: null,
			completedAt: null,
		},
		providerTurn: null,
		prompt: input.text,
		instanceId,
		preparing: input.status === "preparing",
		controller: new AbortController(),
		itemCount: 0,
		files: [],
		pending: null,
		release: null,
		finishRequested: false,
		interrupting: false,
		steers: [],
	};
	if (!providerThread) {
		providerThread = {
			id: providerThreadId,
			driver: instanceId,
			providerInstanceId: instanceId,
			providerSessionId: providerSessionIdFor(instanceId),
			appThreadId: thread.id,
			ownerNodeId: null,
			nativeThreadRef: null,
			nativeConversationHeadRef: null,
			status: "not_loaded",
			firstRunOrdinal: ordinal,
			lastRunOrdinal: ordinal,
			handoffIds: [],
			forkedFrom: null,
			createdAt: at,
			updatedAt: at,
		};
	} else {
		providerThread = {
			...providerThread,
			lastRunOrdinal: ordinal,
			updatedAt: at,
		};
	}
	store.upsert(
		thread,
		"providerThreads",
		providerThread,
		"provider-thread.updated",
		{
			driver: instanceId,
			providerInstanceId: instanceId,
		},
	);
	put(kit, handle, "runs", run, "run.created");
	put(kit, handle, "attempts", handle.attempt, "run-attempt.created");
	put(kit, handle, "nodes", handle.node, "node.updated");
	const scopeId = checkpointScopeIdFor(thread.id);
	if (!store.find(thread, "checkpointScopes", scopeId)) {
		const scope: Row = {
			id: scopeId,
			threadId: thread.id,
			runId,
			nodeId: rootNodeId,
			parentScopeId: null,
			providerThreadId,
			kind: "root_run",
			ordinalWithinParent: 0,
			advancesAppRunCount: true,
			cwd: kit.workspaceRoot(thread),
			createdAt: at,
		};
		put(kit, handle, "checkpointScopes", scope, "checkpoint-scope.created");
	}
	const message: Row = {
		createdBy: input.createdBy,
		creationSource: input.creationSource,
		id: input.messageId,
		threadId: thread.id,
		runId,
		nodeId: rootNodeId,
		role: "user",
		text: input.text,
		attachments: input.attachments ?? [],
		streaming: false,
		createdAt: at,
		updatedAt: at,
		...(input.notification ? { notification: input.notification } : {}),
	};
	put(kit, handle, "messages", message, "message.updated");
	addItem(kit, handle, {
		id: `turn-item:message:${input.messageId}`,
		providerTurnId: null,
		...(input.notification
			? { type: "notification", ...input.notification }
			: {
					createdBy: input.createdBy,
					creationSource: input.creationSource,
					type: "user_message",
					messageId: input.messageId,
					inputIntent: input.inputIntent,
					text: input.text,
					attachments: input.attachments ?? [],
				}),
	});
	let sequence = store.head();
	if (handle.preparing) {
		// launchThread runs workspace preparation first (OBSERVED.md §5.2).
		addItem(kit, handle, {
			id: providerItemIdFor(
				instanceId,
				`workspace-preparation${encodeURIComponent(`:${runId}`)}`,
			),
			status: "running",
			title: "Preparing workspace",
			completedAt: null,
			type: "command_execution",
			input: "Preparing workspace",
		});
		sequence = store.head();
	}
	return { handle, sequence };
}

/** Drive the run from its current status to a terminal one. Never throws. */
