/**
 * The run handle and the small writers every run step uses: each one updates the row in the
 * store and emits its domain event with the envelope of OBSERVED.md §5.5, so run-lifecycle.ts
 * and agent-io.ts read as a list of protocol facts.
 */

import type { RuntimeResponse } from "../agent/script.ts";
import type { SimCompat } from "../compat.ts";
import { attemptIdFor, nowIso, type Row } from "../engine/rows.ts";
import type { Scheduler } from "../engine/scheduler.ts";
import type {
	Collection,
	EventEnvelope,
	Store,
	ThreadState,
} from "../engine/store.ts";

export interface RunKit {
	store: Store;
	scheduler: Scheduler;
	stepMs: number;
	/** Which T3 Code the runs imitate (compat.ts). */
	compat: SimCompat;
	workspaceRoot(thread: ThreadState): string;
	/** Called once a run reached a terminal status; starts the next queued run unless held. */
	onRunFinished(thread: ThreadState, holdQueue: boolean): void;
	/** A command T3 sends itself (wake runs, wake-run.ts). */
	selfDispatch(command: Record<string, unknown>): void;
	/** A run failed on a usage limit (usage.ts puts the provider's session window at 100 %). */
	onUsageLimit?(instanceId: string, resetAt: string): void;
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
	pending: {
		requestId: string;
		resolve(response: RuntimeResponse): void;
	} | null;
	/** Set while a "long task" holds the turn open. */
	release: (() => void) | null;
	/** `finishRun` came before the script reached its hold: the hold then ends at once. */
	finishRequested: boolean;
	interrupting: boolean;
	/** Messages steered into this run (`steer_active`), for the agent to acknowledge. */
	steers: string[];
}

export interface NewRunInput {
	messageId: string;
	text: string;
	modelSelection: Row | Record<string, unknown>;
	createdBy: string;
	creationSource: string;
	status: "preparing" | "starting" | "queued";
	inputIntent: string;
	/** A wake message's notification (wake-run.ts): its timeline item replaces the user_message one. */
	notification?: Record<string, unknown>;
	/** The message's attachment references (attachments.ts), as the command carried them. */
	attachments?: Row[];
}

export const env = (h: RunHandle, nodeId?: string): EventEnvelope => ({
	runId: h.run.id,
	nodeId: nodeId ?? (h.node.id as string),
	providerInstanceId: h.instanceId,
});

export function put(
	kit: RunKit,
	h: RunHandle,
	collection: Collection,
	row: Row,
	type: string,
	nodeId?: string,
): number {
	return kit.store.upsert(h.thread, collection, row, type, env(h, nodeId));
}

export function setRun(
	kit: RunKit,
	h: RunHandle,
	patch: Record<string, unknown>,
): number {
	h.run = { ...h.run, ...patch };
	return put(kit, h, "runs", h.run, "run.updated");
}
export function setAttempt(
	kit: RunKit,
	h: RunHandle,
	patch: Record<string, unknown>,
): number {
	h.attempt = { ...h.attempt, ...patch };
	return put(kit, h, "attempts", h.attempt, "run-attempt.updated");
}
/**
 * A new attempt of the same run (a preparation retry, a steering restart): the next ordinal,
 * pending, no provider turn yet, and the handle's per-attempt state reset.
 */
export function startNewAttempt(
	kit: RunKit,
	h: RunHandle,
	reason: string,
	state: Partial<RunHandle> = {},
): number {
	const ordinal = Number(h.attempt.attemptOrdinal ?? 1) + 1;
	h.attempt = {
		...h.attempt,
		id: attemptIdFor(h.run.id, ordinal),
		attemptOrdinal: ordinal,
		providerTurnId: null,
		reason,
		status: "pending",
		startedAt: null,
		completedAt: null,
	};
	const sequence = put(kit, h, "attempts", h.attempt, "run-attempt.created");
	Object.assign(h, {
		controller: new AbortController(),
		providerTurn: null,
		pending: null,
		release: null,
		finishRequested: false,
		steers: [],
		...state,
	});
	return sequence;
}
export function setNode(
	kit: RunKit,
	h: RunHandle,
	patch: Record<string, unknown>,
): number {
	h.node = { ...h.node, ...patch };
	return put(kit, h, "nodes", h.node, "node.updated");
}
export function setProviderThread(
	kit: RunKit,
	h: RunHandle,
	status: string,
): number {
	const row = kit.store.find(
		h.thread,
		"providerThreads",
		h.run.providerThreadId as string,
	);
	if (!row) return kit.store.head();
	return put(
		kit,
		h,
		"providerThreads",
		{ ...row, status, updatedAt: nowIso() },
		"provider-thread.updated",
	);
}
export function setProviderTurn(
	kit: RunKit,
	h: RunHandle,
	patch: Record<string, unknown>,
): number {
	if (!h.providerTurn) return kit.store.head();
	h.providerTurn = { ...h.providerTurn, ...patch };
	return put(kit, h, "providerTurns", h.providerTurn, "provider-turn.updated");
}

/** A turn item with the common fields of PROTOCOL.md §7.3; ordinals sort by run then step. */
export function addItem(
	kit: RunKit,
	h: RunHandle,
	fields: Record<string, unknown> & { id: string },
): Row {
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
export function updateItem(
	kit: RunKit,
	h: RunHandle,
	item: Row,
	patch: Record<string, unknown>,
): Row {
	const next: Row = { ...item, ...patch, updatedAt: nowIso() };
	put(kit, h, "turnItems", next, "turn-item.updated", next.nodeId as string);
	return next;
}

/** Write the rows a newly accepted run starts with; returns the handle and the last sequence. */
