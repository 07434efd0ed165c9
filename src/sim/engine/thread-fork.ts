/**
 * `thread.fork` (PROTOCOL.md §6.9, RELEASED-0.1.md §3) as T3's orchestrator runs it
 * (`dispatchThreadFork` and `ThreadForkServiceV2.plan`, idx 70105834407, 69176170854;
 * REVIEW-fa93027.md §2b): the source point picks one source run; the fork is a new AppThread
 * copied from the source's (same project, branch and worktree), with `lineage` and a typed
 * `forkedFrom`, written as `thread.created`, then a pending fork `context-transfer.created`.
 * No runs, messages or turn items are copied: the inherited conversation shows only in the
 * fork's `visibleTurnItems` (visible-items.ts), and is what the fork's agent remembers.
 */
import { placeFork } from "../repo/worktrees.ts";
import { newId, nowIso, type Row } from "./rows.ts";
import type { Store, ThreadState } from "./store.ts";
import { visibleTurnItems } from "./visible-items.ts";

export interface CarriedMessage {
	role: string;
	text: string;
}

/** The conversation a fork starts with: its inherited message items (empty for any other thread). */
export function carriedConversation(
	store: Store,
	thread: ThreadState,
): CarriedMessage[] {
	return visibleTurnItems(store.threads, thread)
		.filter((row) => row.visibility === "inherited")
		.map((row) => row.item as Row)
		.filter(
			(item) =>
				(item.type === "user_message" || item.type === "assistant_message") &&
				item.streaming !== true,
		)
		.map((item) => ({
			role: item.type === "user_message" ? "user" : "assistant",
			text: String(item.text ?? ""),
		}));
}

export const FORK_REQUIRED = [
	"commandId",
	"createdBy",
	"creationSource",
	"sourceThreadId",
	"targetThreadId",
	"sourcePoint",
];

/**
 * `isForkableSourceRunStatus` (idx 69176170854): provider-finished runs, `waiting` (checkpoint
 * capture pending) included; in-progress and rolled-back runs cannot be forked.
 */
const FORKABLE = new Set([
	"completed",
	"waiting",
	"failed",
	"interrupted",
	"cancelled",
]);

/** `runForSourcePoint` (idx 70105834407): `latest_stable` is the newest completed run with a checkpoint. */
function sourceRun(
	source: ThreadState,
	point: Record<string, unknown>,
): Row | undefined {
	const runs = source.rows.runs;
	if (point.type === "latest_stable")
		return runs
			.filter((r) => r.status === "completed" && r.checkpointId != null)
			.sort((a, b) => (b.ordinal as number) - (a.ordinal as number))[0];
	if (point.type === "run") return runs.find((r) => r.id === point.runId);
	if (point.type === "checkpoint") {
		const checkpoint = source.rows.checkpoints.find(
			(c) => c.id === point.checkpointId,
		);
		return typeof checkpoint?.runId === "string"
			? runs.find((r) => r.id === checkpoint.runId)
			: undefined;
	}
	return undefined;
}

/** `contextSourcePointForRun` (idx 70105834407): the run, its checkpoint and native refs where known. */
function canonicalPoint(
	source: ThreadState,
	run: Row,
): Record<string, unknown> {
	const providerThread = source.rows.providerThreads.find(
		(t) => t.id === run.providerThreadId,
	);
	const providerTurn = source.rows.providerTurns.find(
		(t) => t.runAttemptId === run.activeAttemptId,
	);
	return {
		threadId: source.id,
		runId: run.id,
		...(run.checkpointId == null ? {} : { checkpointId: run.checkpointId }),
		...(providerThread?.nativeThreadRef == null
			? {}
			: { providerThreadRef: providerThread.nativeThreadRef }),
		...(providerTurn?.nativeTurnRef == null
			? {}
			: { providerTurnRef: providerTurn.nativeTurnRef }),
	};
}

export function forkThread(
	store: Store,
	c: Record<string, unknown>,
): number | string {
	const sourceId = String(c.sourceThreadId);
	const source = store.threads.get(sourceId);
	if (!source || source.app.deletedAt)
		return `Failed to load orchestration projection for thread ${sourceId}.`;
	const targetId = String(c.targetThreadId);
	if (store.threads.has(targetId)) return `Thread ${targetId} already exists.`;
	const point = (c.sourcePoint ?? {}) as Record<string, unknown>;
	const run = sourceRun(source, point);
	if (!run)
		return `No stable source run was found for fork source ${String(point.type)}.`;
	if (!FORKABLE.has(String(run.status)))
		return `Fork source run ${run.id} is ${String(run.status)}; in-progress and rolled-back runs cannot be forked.`;
	const at = nowIso();
	const lineage = source.app.lineage as Row | undefined;
	const app: Row = {
		...structuredClone(source.app),
		createdBy: c.createdBy,
		creationSource: c.creationSource,
		id: targetId,
		title:
			typeof c.title === "string"
				? c.title
				: `${String(source.app.title)} fork`,
		activeProviderThreadId: null,
		lineage: {
			parentThreadId: source.id,
			relationshipToParent: "fork",
			rootThreadId: lineage?.rootThreadId ?? source.id,
		},
		forkedFrom: { type: "run", threadId: source.id, runId: run.id },
		createdAt: at,
		updatedAt: at,
		archivedAt: null,
		settledOverride: null,
		settledAt: null,
		snoozedUntil: null,
		snoozedAt: null,
		lastVisitedAt: null,
		deletedAt: null,
	};
	const fork = store.createThread(app, {
		providerInstanceId: String(app.providerInstanceId),
	});
	placeFork(source, fork, store);
	const providerThread = source.rows.providerThreads.find(
		(t) => t.id === run.providerThreadId,
	);
	const strong =
		(providerThread?.nativeThreadRef as Row | null | undefined)?.strength ===
		"strong";
	// T3 consumes the transfer when the fork's first run hands the history to its provider; the
	// simulator's agent reads the inherited rows instead, so it stays pending.
	const transfer: Row = {
		id: `context-transfer:fork:${newId()}`,
		type: "fork",
		sourceThreadId: source.id,
		targetThreadId: targetId,
		sourcePoint: canonicalPoint(source, run),
		basePoint: null,
		sourceProviderInstanceId: run.providerInstanceId,
		targetProviderInstanceId: null,
		targetRunId: null,
		status: "pending",
		resolution: null,
		createdBy: c.createdBy,
		error: strong
			? null
			: "Source provider thread does not expose a strong native thread ref.",
		createdAt: at,
		updatedAt: at,
		consumedAt: null,
	};
	return store.upsert(
		fork,
		"contextTransfers",
		transfer,
		"context-transfer.created",
		{ providerInstanceId: String(run.providerInstanceId) },
	);
}
