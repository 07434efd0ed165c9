/**
 * One run's life as the real engine streams it (OBSERVED.md §5.6): the rows a new run
 * writes, then preparing → starting → running → (agent script) → waiting → completed with a
 * checkpoint, or the failed / interrupted / cancelled endings. The agent's steps themselves
 * live in agent.ts; this module turns them into turn items, runtime requests and events.
 */
import { TERMINAL_RUN_STATUSES } from "../t3/model.ts";
import { type AgentIO, type AgentScript, AgentFailure, type RuntimeResponse } from "./agent.ts";
import {
	assistantMessageIdFor,
	attemptIdFor,
	checkpointIdFor,
	checkpointScopeIdFor,
	nativeRef,
	newId,
	nowIso,
	providerItemIdFor,
	providerNodeIdFor,
	providerSessionIdFor,
	providerThreadIdFor,
	providerTurnIdFor,
	type Row,
	rootNodeIdFor,
	runIdFor,
	runtimeRequestIdFor,
	SESSION_CAPABILITIES,
} from "./rows.ts";
import { Cancelled, type Scheduler } from "./scheduler.ts";
import type { Collection, EventEnvelope, Store, ThreadState } from "./store.ts";

export interface RunKit {
	store: Store;
	scheduler: Scheduler;
	stepMs: number;
	workspaceRoot(thread: ThreadState): string;
	/** Called once a run reached a terminal status; starts the next queued run unless held. */
	onRunFinished(thread: ThreadState, holdQueue: boolean): void;
}

export interface RunHandle {
	thread: ThreadState;
	run: Row;
	attempt: Row;
	node: Row;
	providerTurn: Row | null;
	prompt: string;
	instanceId: string;
	preparing: boolean;
	controller: AbortController;
	itemCount: number;
	files: { path: string; kind: string; additions: number; deletions: number }[];
	/** Set while the script waits for a runtime-request answer. */
	pending: { requestId: string; resolve(response: RuntimeResponse): void } | null;
	/** Set while a "long task" holds the turn open. */
	release: (() => void) | null;
	interrupting: boolean;
}

export interface NewRunInput {
	messageId: string;
	text: string;
	modelSelection: Row | Record<string, unknown>;
	createdBy: string;
	creationSource: string;
	status: "preparing" | "starting" | "queued";
	inputIntent: string;
}

const env = (h: RunHandle, nodeId?: string): EventEnvelope => ({
	runId: h.run.id,
	nodeId: nodeId ?? (h.node.id as string),
	providerInstanceId: h.instanceId,
});

function put(kit: RunKit, h: RunHandle, collection: Collection, row: Row, type: string, nodeId?: string): number {
	return kit.store.upsert(h.thread, collection, row, type, env(h, nodeId));
}

function setRun(kit: RunKit, h: RunHandle, patch: Record<string, unknown>): number {
	h.run = { ...h.run, ...patch };
	return put(kit, h, "runs", h.run, "run.updated");
}
function setAttempt(kit: RunKit, h: RunHandle, patch: Record<string, unknown>): number {
	h.attempt = { ...h.attempt, ...patch };
	return put(kit, h, "attempts", h.attempt, "run-attempt.updated");
}
function setNode(kit: RunKit, h: RunHandle, patch: Record<string, unknown>): number {
	h.node = { ...h.node, ...patch };
	return put(kit, h, "nodes", h.node, "node.updated");
}
function setProviderThread(kit: RunKit, h: RunHandle, status: string): number {
	const row = kit.store.find(h.thread, "providerThreads", h.run.providerThreadId as string);
	if (!row) return kit.store.head();
	return put(kit, h, "providerThreads", { ...row, status, updatedAt: nowIso() }, "provider-thread.updated");
}
function setProviderTurn(kit: RunKit, h: RunHandle, patch: Record<string, unknown>): number {
	if (!h.providerTurn) return kit.store.head();
	h.providerTurn = { ...h.providerTurn, ...patch };
	return put(kit, h, "providerTurns", h.providerTurn, "provider-turn.updated");
}

/** A turn item with the common fields of PROTOCOL.md §7.3; ordinals sort by run then step. */
function addItem(kit: RunKit, h: RunHandle, fields: Record<string, unknown> & { id: string }): Row {
	h.itemCount += 1;
	const at = nowIso();
	const item: Row = {
		threadId: h.thread.id,
		runId: h.run.id,
		nodeId: h.node.id,
		providerThreadId: h.run.providerThreadId,
		providerTurnId: h.providerTurn?.id ?? null,
		nativeItemRef: null,
		parentItemId: null,
		ordinal: (h.run.ordinal as number) * 1_000_000 + h.itemCount,
		status: "completed",
		title: null,
		startedAt: at,
		completedAt: at,
		updatedAt: at,
		...fields,
	};
	put(kit, h, "turnItems", item, "turn-item.updated", item.nodeId as string);
	return item;
}
function updateItem(kit: RunKit, h: RunHandle, item: Row, patch: Record<string, unknown>): Row {
	const next: Row = { ...item, ...patch, updatedAt: nowIso() };
	put(kit, h, "turnItems", next, "turn-item.updated", next.nodeId as string);
	return next;
}

/** Write the rows a newly accepted run starts with; returns the handle and the last sequence. */
export function createRun(kit: RunKit, thread: ThreadState, input: NewRunInput): { handle: RunHandle; sequence: number } {
	const { store } = kit;
	const ordinal = thread.rows.runs.length + 1;
	const runId = runIdFor(thread.id, ordinal);
	const instanceId = String(input.modelSelection.instanceId ?? thread.app.providerInstanceId ?? "codex");
	const at = nowIso();
	let providerThread = thread.rows.providerThreads[0];
	const rootNodeId = rootNodeIdFor(runId);
	const attemptId = attemptIdFor(runId);
	const providerThreadId = (providerThread?.id as string | undefined) ?? providerThreadIdFor(instanceId, runId);
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
		queuePosition: input.status === "queued" ? thread.rows.runs.filter((r) => r.status === "queued").length + 1 : null,
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
		interrupting: false,
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
		providerThread = { ...providerThread, lastRunOrdinal: ordinal, updatedAt: at };
	}
	store.upsert(thread, "providerThreads", providerThread, "provider-thread.updated", {
		driver: instanceId,
		providerInstanceId: instanceId,
	});
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
		attachments: [],
		streaming: false,
		createdAt: at,
		updatedAt: at,
	};
	put(kit, handle, "messages", message, "message.updated");
	addItem(kit, handle, {
		id: `turn-item:message:${input.messageId}`,
		providerTurnId: null,
		createdBy: input.createdBy,
		creationSource: input.creationSource,
		type: "user_message",
		messageId: input.messageId,
		inputIntent: input.inputIntent,
		text: input.text,
		attachments: [],
	});
	let sequence = store.head();
	if (handle.preparing) {
		// launchThread runs workspace preparation first (OBSERVED.md §5.2).
		addItem(kit, handle, {
			id: providerItemIdFor(instanceId, `workspace-preparation${encodeURIComponent(`:${runId}`)}`),
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
export async function driveRun(kit: RunKit, h: RunHandle, script: AgentScript): Promise<void> {
	const signal = h.controller.signal;
	const step = () => kit.scheduler.sleep(kit.stepMs, signal);
	try {
		if (h.preparing) {
			await step();
			const prep = h.thread.rows.turnItems.find((i) => i.type === "command_execution" && i.runId === h.run.id);
			if (prep) {
				const item = updateItem(kit, h, prep, { title: "Starting setup script", input: "Starting setup script" });
				await step();
				updateItem(kit, h, item, {
					status: "completed",
					title: "Workspace ready",
					input: "Workspace ready",
					exitCode: 0,
					completedAt: nowIso(),
				});
			}
			h.preparing = false;
			setRun(kit, h, { status: "starting" });
		}
		await step();
		attachSession(kit, h);
		setProviderThread(kit, h, "active");
		const at = nowIso();
		setRun(kit, h, { status: "running", startedAt: at, queuePosition: null });
		setAttempt(kit, h, { status: "running", startedAt: at });
		setNode(kit, h, { status: "running", startedAt: at });
		await step();
		const providerTurnId = providerTurnIdFor(h.instanceId);
		h.providerTurn = {
			id: providerTurnId,
			providerThreadId: h.run.providerThreadId,
			nodeId: h.node.id,
			runAttemptId: h.attempt.id,
			nativeTurnRef: nativeRef(h.instanceId, providerTurnId.split(":").pop() ?? newId()),
			ordinal: h.run.ordinal,
			status: "running",
			startedAt: nowIso(),
			completedAt: null,
		};
		put(kit, h, "providerTurns", h.providerTurn, "provider-turn.updated");
		await script(agentIO(kit, h, step));
		await step();
		completeRun(kit, h);
	} catch (error) {
		if (error instanceof AgentFailure) return failRun(kit, h, error.message);
		if (error instanceof Cancelled) return; // whoever aborted writes the ending
		failRun(kit, h, error instanceof Error ? error.message : String(error));
	}
}

function attachSession(kit: RunKit, h: RunHandle): void {
	const id = providerSessionIdFor(h.instanceId);
	const existing = kit.store.find(h.thread, "providerSessions", id);
	const at = nowIso();
	const row: Row = {
		id,
		driver: h.instanceId,
		providerInstanceId: h.instanceId,
		status: "ready",
		cwd: kit.workspaceRoot(h.thread),
		model: (h.run.modelSelection as Record<string, unknown>)?.model ?? null,
		capabilities: SESSION_CAPABILITIES,
		createdAt: existing?.createdAt ?? at,
		updatedAt: at,
		lastError: null,
	};
	kit.store.upsert(h.thread, "providerSessions", row, existing ? "provider-session.updated" : "provider-session.attached", {
		driver: h.instanceId,
		providerInstanceId: h.instanceId,
	});
}

function agentIO(kit: RunKit, h: RunHandle, step: () => Promise<void>): AgentIO {
	function messageRows(nativeId: string) {
		return {
			messageId: assistantMessageIdFor(h.instanceId, nativeId),
			itemId: providerItemIdFor(h.instanceId, nativeId),
			nodeId: providerNodeIdFor(h.instanceId, nativeId),
		};
	}
	function upsertAssistant(ids: ReturnType<typeof messageRows>, text: string, streaming: boolean, item: Row | null): Row {
		const at = nowIso();
		const existing = kit.store.find(h.thread, "messages", ids.messageId);
		const message: Row = {
			createdBy: "agent",
			creationSource: "provider",
			id: ids.messageId,
			threadId: h.thread.id,
			runId: h.run.id,
			nodeId: ids.nodeId,
			role: "assistant",
			text,
			attachments: [],
			streaming,
			createdAt: existing?.createdAt ?? at,
			updatedAt: at,
		};
		put(kit, h, "messages", message, "message.updated", ids.nodeId);
		const fields = {
			status: streaming ? "running" : "completed",
			completedAt: streaming ? null : at,
			text,
			streaming,
		};
		if (item) return updateItem(kit, h, item, fields);
		return addItem(kit, h, {
			id: ids.itemId,
			nodeId: ids.nodeId,
			nativeItemRef: nativeRef(h.instanceId, ids.itemId.split(":").pop() ?? ""),
			...fields,
			type: "assistant_message",
			messageId: ids.messageId,
		});
	}
	async function request(kind: string, itemFields: Record<string, unknown>): Promise<RuntimeResponse> {
		const callId = `call_${newId()}`;
		const requestId = runtimeRequestIdFor(h.instanceId, h.providerTurn?.id as string, callId);
		const nodeId = providerNodeIdFor(h.instanceId, callId);
		const at = nowIso();
		const node: Row = {
			id: nodeId,
			threadId: h.thread.id,
			runId: h.run.id,
			parentNodeId: h.node.id,
			rootNodeId: h.node.id,
			kind: kind === "user_input" ? "user_input_request" : "approval_request",
			status: "waiting",
			countsForRun: false,
			providerThreadId: h.run.providerThreadId,
			providerTurnId: h.providerTurn?.id ?? null,
			nativeItemRef: nativeRef(h.instanceId, callId),
			runtimeRequestId: requestId,
			checkpointScopeId: null,
			startedAt: at,
			completedAt: null,
		};
		put(kit, h, "nodes", node, "node.updated", nodeId);
		const requestRow: Row = {
			id: requestId,
			nodeId,
			providerTurnId: h.providerTurn?.id ?? null,
			nativeRequestRef: nativeRef(h.instanceId, callId),
			kind,
			status: "pending",
			responseCapability: { type: "live", providerSessionId: providerSessionIdFor(h.instanceId) },
			createdAt: at,
			resolvedAt: null,
		};
		put(kit, h, "runtimeRequests", requestRow, "runtime-request.updated", nodeId);
		addItem(kit, h, {
			id: providerItemIdFor(h.instanceId, callId),
			nodeId,
			nativeItemRef: nativeRef(h.instanceId, callId),
			status: "waiting",
			completedAt: null,
			requestId,
			...itemFields,
		});
		const response = await new Promise<RuntimeResponse>((resolve, reject) => {
			h.pending = { requestId, resolve };
			h.controller.signal.addEventListener("abort", () => reject(new Cancelled()), { once: true });
		});
		h.pending = null;
		return response;
	}
	return {
		prompt: h.prompt,
		step,
		async say(text) {
			const ids = messageRows(`msg_${newId()}`);
			const node: Row = { ...h.node, id: ids.nodeId, kind: "assistant_message", parentNodeId: h.node.id, countsForRun: false };
			put(kit, h, "nodes", { ...node, status: "completed", completedAt: nowIso() }, "node.updated", ids.nodeId);
			upsertAssistant(ids, text, false, null);
		},
		async stream(parts) {
			const ids = messageRows(`msg_${newId()}`);
			let text = "";
			let item: Row | null = null;
			for (const part of parts) {
				text += part;
				item = upsertAssistant(ids, text, true, item);
				await step();
			}
			upsertAssistant(ids, text, false, item);
		},
		async command(input, exitCode = 0) {
			const nativeId = `call_${newId()}`;
			const item = addItem(kit, h, {
				id: providerItemIdFor(h.instanceId, nativeId),
				nativeItemRef: nativeRef(h.instanceId, nativeId),
				status: "running",
				title: "Run command",
				completedAt: null,
				type: "command_execution",
				input,
			});
			await step();
			updateItem(kit, h, item, { status: "completed", exitCode, completedAt: nowIso() });
		},
		async fileChange(fileName, additions, deletions) {
			const nativeId = `call_${newId()}`;
			addItem(kit, h, {
				id: providerItemIdFor(h.instanceId, nativeId),
				nativeItemRef: nativeRef(h.instanceId, nativeId),
				title: "Edit file",
				type: "file_change",
				fileName,
				additions,
				deletions,
			});
			h.files.push({ path: fileName, kind: "modified", additions, deletions });
		},
		ask: (questions) => request("user_input", { type: "user_input_request", questions }),
		approve: (requestKind, prompt) => request(requestKind, { type: "approval_request", requestKind, prompt }),
		hold() {
			return new Promise<void>((resolve, reject) => {
				h.release = () => {
					h.release = null;
					resolve();
				};
				h.controller.signal.addEventListener("abort", () => reject(new Cancelled()), { once: true });
			});
		},
	};
}

function completeRun(kit: RunKit, h: RunHandle): void {
	setProviderTurn(kit, h, { status: "completed", completedAt: nowIso() });
	setAttempt(kit, h, { status: "completed", completedAt: nowIso() });
	setRun(kit, h, { status: "waiting" });
	setNode(kit, h, { status: "waiting" });
	setProviderThread(kit, h, "idle");
	// `waiting` = turn over, checkpoint capture pending (OBSERVED.md §5.6); finish one step later.
	kit.scheduler.later(kit.stepMs, () => {
		if (h.controller.signal.aborted || TERMINAL_RUN_STATUSES.has(h.run.status as string)) return;
		const { thread } = h;
		const scopeId = checkpointScopeIdFor(thread.id);
		thread.checkpointCount += 1;
		const checkpointId = checkpointIdFor(scopeId, thread.checkpointCount);
		const at = nowIso();
		put(kit, h, "checkpoints", {
			id: checkpointId,
			threadId: thread.id,
			scopeId,
			runId: h.run.id,
			nodeId: h.node.id,
			parentCheckpointId: null,
			ordinalWithinScope: thread.checkpointCount,
			appRunOrdinal: h.run.ordinal,
			ref: `refs/t3/orchestration-v2/checkpoints/sim/ordinal/${thread.checkpointCount}`,
			status: "ready",
			files: h.files,
			capturedAt: at,
		}, "checkpoint.captured");
		addItem(kit, h, {
			id: providerItemIdFor(h.instanceId, `checkpoint${encodeURIComponent(`:${checkpointId}`)}`),
			type: "checkpoint",
			checkpointId,
			scopeId,
			files: h.files,
		});
		setRun(kit, h, { status: "completed", completedAt: at, checkpointId });
		setNode(kit, h, { status: "completed", completedAt: at });
		kit.onRunFinished(thread, false);
	});
}

function failRun(kit: RunKit, h: RunHandle, message: string): void {
	const at = nowIso();
	setProviderTurn(kit, h, { status: "failed", completedAt: at });
	addItem(kit, h, {
		id: providerItemIdFor(h.instanceId, `terminal-failure${encodeURIComponent(`:${h.providerTurn?.id ?? h.run.id}`)}`),
		status: "failed",
		title: "Provider error",
		type: "error",
		failure: { class: "provider_error", message, code: null, retryable: null },
	});
	setAttempt(kit, h, { status: "failed", completedAt: at });
	h.thread.lastError = message;
	setRun(kit, h, { status: "failed", completedAt: at });
	setNode(kit, h, { status: "failed", completedAt: at });
	setProviderThread(kit, h, "idle");
	kit.onRunFinished(h.thread, false);
}

function closePendingRequests(kit: RunKit, h: RunHandle, status: string): void {
	for (const request of h.thread.rows.runtimeRequests) {
		if (request.status !== "pending") continue;
		const node = kit.store.find(h.thread, "nodes", request.nodeId as string);
		if (node?.runId !== h.run.id) continue;
		put(kit, h, "runtimeRequests", { ...request, status, resolvedAt: nowIso() }, "runtime-request.updated", node.id);
		const item = h.thread.rows.turnItems.find((i) => i.requestId === request.id);
		if (item) updateItem(kit, h, item, { status: "cancelled", completedAt: nowIso() });
	}
	h.pending = null;
}

/** run.interrupt: write the request item now (its sequence is the command's), end the run a step later. */
export function interruptRun(kit: RunKit, h: RunHandle, reason: string | undefined, holdQueue: boolean): number {
	h.interrupting = true;
	const requestItem = addItem(kit, h, {
		id: `turn-item:run:${encodeURIComponent(h.run.id)}:signal:interrupt-request`,
		title: "Interrupt requested",
		type: "run_interrupt_request",
		message: reason ?? "Interrupt requested",
	});
	const sequence = kit.store.head();
	h.controller.abort();
	kit.scheduler.later(kit.stepMs, () => {
		if (TERMINAL_RUN_STATUSES.has(h.run.status as string)) return;
		const at = nowIso();
		setProviderTurn(kit, h, { status: "interrupted", completedAt: at });
		setAttempt(kit, h, { status: "interrupted", completedAt: at });
		closePendingRequests(kit, h, "cancelled");
		addItem(kit, h, {
			id: `turn-item:run:${encodeURIComponent(h.run.id)}:signal:interrupt-result`,
			parentItemId: requestItem.id,
			status: "interrupted",
			title: "Interrupted",
			type: "run_interrupt_result",
			message: "Run interrupted by user",
		});
		setRun(kit, h, { status: "interrupted", completedAt: at });
		setNode(kit, h, { status: "interrupted", completedAt: at });
		setProviderThread(kit, h, "idle");
		kit.onRunFinished(h.thread, holdQueue);
	});
	return sequence;
}

/** Server shutdown / restart: every non-terminal run ends `cancelled` (OBSERVED.md §6.7 35). */
export function cancelRun(kit: RunKit, h: RunHandle): void {
	h.controller.abort();
	const at = nowIso();
	closePendingRequests(kit, h, "cancelled");
	if (h.providerTurn && h.providerTurn.status === "running") setProviderTurn(kit, h, { status: "cancelled", completedAt: at });
	setAttempt(kit, h, { status: "cancelled", completedAt: at });
	setRun(kit, h, { status: "cancelled", completedAt: at, queuePosition: null });
	setNode(kit, h, { status: "cancelled", completedAt: at });
}

/** runtime-request.respond: resolve the request; the waiting script continues. */
export function resolveRequest(kit: RunKit, h: RunHandle | undefined, thread: ThreadState, request: Row, response: RuntimeResponse): number {
	const at = nowIso();
	const recorded: Record<string, unknown> = { status: "resolved", resolvedAt: at };
	if (response.decision !== undefined) recorded.decision = response.decision;
	if (response.answers !== undefined) recorded.answers = response.answers;
	const envelope: EventEnvelope = { nodeId: request.nodeId as string };
	const node = kit.store.find(thread, "nodes", request.nodeId as string);
	if (node?.runId) envelope.runId = node.runId as string;
	kit.store.upsert(thread, "runtimeRequests", { ...request, ...recorded }, "runtime-request.updated", envelope);
	if (node) kit.store.upsert(thread, "nodes", { ...node, status: "completed", completedAt: at }, "node.updated", envelope);
	const item = thread.rows.turnItems.find((i) => i.requestId === request.id);
	if (item) {
		kit.store.upsert(thread, "turnItems", { ...item, status: "completed", completedAt: at, updatedAt: at }, "turn-item.updated", envelope);
	}
	const sequence = kit.store.head();
	if (h?.pending?.requestId === request.id) h.pending.resolve(response);
	return sequence;
}
