/**
 * Room `sim/runs/`: one run's life in the simulator, from the rows it writes to its outcome:
 * lifecycle phases, steering, run rows and when each outcome first went on the wire. May import
 * `sim/engine` (store, rows), `sim/agent` (the script a run plays), `sim/repo`, the `sim/` root
 * and T3's status sets from `t3/model.ts`; never the wire.
 */
/**
 * One run's life as the real engine streams it (OBSERVED.md §5.6): the rows a new run
 * writes, then preparing → starting → running → (agent script) → waiting → completed with a
 * checkpoint, or the failed / interrupted / cancelled endings. The agent's steps themselves
 * live in agent.ts; this module turns them into turn items, runtime requests and events.
 */
import { TERMINAL_RUN_STATUSES } from "../../t3/model.ts";
import { agentIO } from "../agent/agent-io.ts";
import {
	failPreparation,
	failsPreparation,
} from "../agent/preparation-failure.ts";
import {
	AgentFailure,
	type AgentScript,
	type FailureDetail,
	type RuntimeResponse,
} from "../agent/script.ts";
import { sessionCapabilities } from "../agent/steering.ts";
import { armLimitRecovery } from "../agent/usage-limit.ts";
import { simHas } from "../compat.ts";
import {
	checkpointIdFor,
	checkpointScopeIdFor,
	nativeRef,
	newId,
	nowIso,
	providerItemIdFor,
	providerSessionIdFor,
	providerTurnIdFor,
	type Row,
} from "../engine/rows.ts";
import { Cancelled } from "../engine/scheduler.ts";
import type { EventEnvelope, ThreadState } from "../engine/store.ts";
import { captureCheckpoint } from "../repo/workspace.ts";
import { prepareWorktree } from "../repo/worktrees.ts";
import { scheduleBranchRename } from "./branch-rename.ts";
import {
	addItem,
	put,
	type RunHandle,
	type RunKit,
	setAttempt,
	setNode,
	setProviderThread,
	setProviderTurn,
	setRun,
	updateItem,
} from "./run-rows.ts";

export { createRun } from "./run-create.ts";
export type { NewRunInput, RunHandle, RunKit } from "./run-rows.ts";

export async function driveRun(
	kit: RunKit,
	h: RunHandle,
	script: AgentScript,
): Promise<void> {
	const signal = h.controller.signal;
	const step = () => kit.scheduler.sleep(kit.stepMs, signal);
	try {
		if (failsPreparation(h.prompt)) {
			await step();
			return failPreparation(kit, h, failRun);
		}
		if (h.preparing) {
			await step();
			const refused = prepareWorktree(kit.store, h.thread);
			if (refused) return failPreparation(kit, h, failRun, refused);
			if (h.thread.app.worktreePath) {
				kit.store.appendThreadEvent(h.thread, "thread.metadata-updated", {
					providerInstanceId: h.instanceId,
				});
				scheduleBranchRename(kit, h);
			}
			const prep = h.thread.rows.turnItems.find(
				(i) => i.type === "command_execution" && i.runId === h.run.id,
			);
			if (prep) {
				const item = updateItem(kit, h, prep, {
					title: "Starting setup script",
					input: "Starting setup script",
				});
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
			nativeTurnRef: nativeRef(
				h.instanceId,
				providerTurnId.split(":").pop() ?? newId(),
			),
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
		if (error instanceof AgentFailure)
			return failRun(kit, h, error.message, error.detail);
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
		capabilities: sessionCapabilities(h.instanceId),
		createdAt: existing?.createdAt ?? at,
		updatedAt: at,
		lastError: null,
	};
	kit.store.upsert(
		h.thread,
		"providerSessions",
		row,
		existing ? "provider-session.updated" : "provider-session.attached",
		{
			driver: h.instanceId,
			providerInstanceId: h.instanceId,
		},
	);
}

function completeRun(kit: RunKit, h: RunHandle): void {
	setProviderTurn(kit, h, { status: "completed", completedAt: nowIso() });
	setAttempt(kit, h, { status: "completed", completedAt: nowIso() });
	setRun(kit, h, { status: "waiting" });
	setNode(kit, h, { status: "waiting" });
	setProviderThread(kit, h, "idle");
	// `waiting` = turn over, checkpoint capture pending (OBSERVED.md §5.6); finish one step later.
	kit.scheduler.later(kit.stepMs, () => {
		if (
			h.controller.signal.aborted ||
			TERMINAL_RUN_STATUSES.has(h.run.status as string)
		)
			return;
		const { thread } = h;
		captureCheckpoint(thread, h.run.ordinal as number);
		const scopeId = checkpointScopeIdFor(thread.id);
		thread.checkpointCount += 1;
		const checkpointId = checkpointIdFor(scopeId, thread.checkpointCount);
		const at = nowIso();
		put(
			kit,
			h,
			"checkpoints",
			{
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
			},
			"checkpoint.captured",
		);
		addItem(kit, h, {
			id: providerItemIdFor(
				h.instanceId,
				`checkpoint${encodeURIComponent(`:${checkpointId}`)}`,
			),
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

const FAILURE_TITLES: Record<string, string> = {
	usage_limit: "Usage limit reached",
	provider_error: "Provider error",
};

/** Ends the run `failed` with an `error` item classified by `detail` (default a provider error). */
export function failRun(
	kit: RunKit,
	h: RunHandle,
	message: string,
	given: FailureDetail = { class: "provider_error" },
): void {
	// The pre-release knows no usage-limit class, reset time or recovery (compat.ts).
	const released = simHas(kit.compat, "failureDetail");
	const detail: FailureDetail = released
		? given
		: {
				class: given.class === "usage_limit" ? "provider_error" : given.class,
				code: given.code ?? null,
			};
	const at = nowIso();
	setProviderTurn(kit, h, { status: "failed", completedAt: at });
	const failure: Record<string, unknown> = {
		class: detail.class,
		message,
		code: detail.code ?? null,
		retryable: null,
	};
	if (detail.resetAt !== undefined) failure.resetAt = detail.resetAt;
	addItem(kit, h, {
		id: providerItemIdFor(
			h.instanceId,
			`terminal-failure${encodeURIComponent(`:${h.providerTurn?.id ?? h.run.id}`)}`,
		),
		status: "failed",
		title: FAILURE_TITLES[detail.class] ?? "Run failed",
		type: "error",
		failure,
	});
	setAttempt(kit, h, { status: "failed", completedAt: at });
	h.thread.lastError = message;
	h.thread.lastErrorClass = released ? detail.class : null;
	h.thread.usageLimitResetAt = detail.resetAt ?? null;
	if (released && detail.class === "usage_limit" && detail.resetAt)
		kit.onUsageLimit?.(h.instanceId, detail.resetAt);
	if (detail.autoResume && detail.resetAt !== undefined)
		armLimitRecovery(kit, h, detail.resetAt);
	setRun(kit, h, { status: "failed", completedAt: at });
	setNode(kit, h, { status: "failed", completedAt: at });
	setProviderThread(kit, h, "idle");
	kit.onRunFinished(h.thread, false);
}

export function closePendingRequests(
	kit: RunKit,
	h: RunHandle,
	status: string,
): void {
	for (const request of h.thread.rows.runtimeRequests) {
		if (request.status !== "pending") continue;
		const node = kit.store.find(h.thread, "nodes", request.nodeId as string);
		if (node?.runId !== h.run.id) continue;
		put(
			kit,
			h,
			"runtimeRequests",
			{ ...request, status, resolvedAt: nowIso() },
			"runtime-request.updated",
			node.id,
		);
		const item = h.thread.rows.turnItems.find(
			(i) => i.requestId === request.id,
		);
		if (item)
			updateItem(kit, h, item, { status: "cancelled", completedAt: nowIso() });
	}
	h.pending = null;
}

/** run.interrupt: write the request item now (its sequence is the command's), end the run a step later. */
export function interruptRun(
	kit: RunKit,
	h: RunHandle,
	reason: string | undefined,
	holdQueue: boolean,
): number {
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
	if (h.providerTurn && h.providerTurn.status === "running")
		setProviderTurn(kit, h, { status: "cancelled", completedAt: at });
	setAttempt(kit, h, { status: "cancelled", completedAt: at });
	setRun(kit, h, { status: "cancelled", completedAt: at, queuePosition: null });
	setNode(kit, h, { status: "cancelled", completedAt: at });
}

/** runtime-request.respond: resolve the request; the waiting script continues. */
export function resolveRequest(
	kit: RunKit,
	h: RunHandle | undefined,
	thread: ThreadState,
	request: Row,
	response: RuntimeResponse,
): number {
	const recorded: Record<string, unknown> = {};
	if (response.decision !== undefined) recorded.decision = response.decision;
	if (response.answers !== undefined) recorded.answers = response.answers;
	return endRequest(kit, h, thread, request, {
		recorded,
		closedAs: "completed",
		answer: response,
	});
}

/**
 * Ends a pending request as `resolved` (with `recorded` on its row), its node and turn item
 * `closedAs`, and hands `answer` to the script waiting on it. Returns the command's last sequence.
 */
export function endRequest(
	kit: RunKit,
	h: RunHandle | undefined,
	thread: ThreadState,
	request: Row,
	end: {
		recorded: Record<string, unknown>;
		closedAs: "completed" | "cancelled";
		answer: RuntimeResponse;
	},
): number {
	const at = nowIso();
	const envelope: EventEnvelope = { nodeId: request.nodeId as string };
	const node = kit.store.find(thread, "nodes", request.nodeId as string);
	if (node?.runId) envelope.runId = node.runId as string;
	kit.store.upsert(
		thread,
		"runtimeRequests",
		{ ...request, status: "resolved", resolvedAt: at, ...end.recorded },
		"runtime-request.updated",
		envelope,
	);
	if (node)
		kit.store.upsert(
			thread,
			"nodes",
			{ ...node, status: end.closedAs, completedAt: at },
			"node.updated",
			envelope,
		);
	const item = thread.rows.turnItems.find((i) => i.requestId === request.id);
	if (item)
		kit.store.upsert(
			thread,
			"turnItems",
			{ ...item, status: end.closedAs, completedAt: at, updatedAt: at },
			"turn-item.updated",
			envelope,
		);
	const sequence = kit.store.head();
	if (h?.pending?.requestId === request.id) h.pending.resolve(end.answer);
	return sequence;
}
