/**
 * The orchestration engine of the simulator: `orchestration.dispatchCommand` commands and
 * `orchestration.launchThread` (PROTOCOL.md §5.2, §6), idempotent by commandId, with the run
 * queue of OBSERVED.md §5.6. Results are `Outcome`s, which rpc-server.ts encodes as Exits.
 */
import { BUSY_RUN_STATUSES, TERMINAL_RUN_STATUSES } from "../../t3/model.ts";
import { pickScript } from "../agent/agent.ts";
import { resolveElsewhere, respondRefusal } from "../agent/request-kinds.ts";
import {
	DELIVERY_INTENTS,
	queuesMessages,
	resolveDeliveryIntent,
	steersLive,
} from "../agent/steering.ts";
import { resumeAfterLimitNow } from "../agent/usage-limit.ts";
import { endBackgroundTasks } from "../agent/wake-run.ts";
import { type SimCompat, type SimFeature, simHas } from "../compat.ts";
import { placeThread, refuseStrategy } from "../repo/worktrees.ts";
import {
	cancelRun,
	createRun,
	driveRun,
	interruptRun,
	type NewRunInput,
	type RunHandle,
	type RunKit,
	resolveRequest,
} from "../runs/run-lifecycle.ts";
import { restartRun, steerRun } from "../runs/run-steer.ts";
import type { AttachmentStore } from "./attachments.ts";
import { retryPreparation } from "./preparation-retry.ts";
import { editQueuedRun } from "./queued-run-edit.ts";
import { dismissRequest } from "./request-dismiss.ts";
import { newId, nowIso, type Row } from "./rows.ts";
import type { Scheduler } from "./scheduler.ts";
import { detachSession } from "./session-detach.ts";
import type { Store, ThreadState } from "./store.ts";
import { FORK_REQUIRED, forkThread } from "./thread-fork.ts";
import { generatedTitle } from "./titles.ts";

export type Outcome = { ok: unknown } | { fail: unknown } | { die: unknown };

export interface Engine {
	dispatch(command: Record<string, unknown>): Outcome;
	launch(input: Record<string, unknown>): Outcome;
	getProjection(threadId: string): Outcome;
	finishRun(threadId: string): void;
	/** Cancel every non-terminal run (server restart / stop). */
	cancelAll(): void;
	/** Forget every thread, run and command receipt: a server that lost its state. */
	wipe(): void;
}

const REQUIRED: Record<string, string[]> = {
	"thread.create": [
		"commandId",
		"threadId",
		"projectId",
		"createdBy",
		"creationSource",
		"title",
		"modelSelection",
		"runtimeMode",
		"interactionMode",
		"branch",
		"worktreePath",
	],
	"message.dispatch": [
		"commandId",
		"threadId",
		"createdBy",
		"creationSource",
		"messageId",
		"text",
		"attachments",
		"dispatchMode",
	],
	"run.interrupt": ["commandId", "threadId", "runId"],
	"runtime-request.respond": ["commandId", "threadId", "requestId"],
	"thread.user-input.dismiss": ["commandId", "threadId", "requestId"],
	"thread.runtime-mode.set": ["commandId", "threadId", "runtimeMode"],
	"thread.interaction-mode.set": ["commandId", "threadId", "interactionMode"],
	"thread.model-selection.set": ["commandId", "threadId", "modelSelection"],
	"thread.metadata.update": ["commandId", "threadId"],
	"thread.archive": ["commandId", "threadId"],
	"thread.unarchive": ["commandId", "threadId"],
	"thread.delete": ["commandId", "threadId"],
	"thread.settle": ["commandId", "threadId"],
	"thread.unsettle": ["commandId", "threadId", "reason"],
	"provider-session.detach": ["commandId", "threadId", "providerSessionId"],
	"queue.resume": ["commandId", "threadId"],
	"queued-run.cancel": ["commandId", "threadId", "runId"],
	"thread.snooze": ["commandId", "threadId", "snoozedUntil"],
	"thread.unsnooze": ["commandId", "threadId"],
	"queued-run.edit": ["commandId", "threadId", "runId", "text"],
	"thread.fork": FORK_REQUIRED,
	"prepared-run.retry": ["commandId", "threadId", "runId"],
};
/** Commands the pre-release engine does not know (compat.ts): it dies on them. */
const NEWER_COMMANDS: Record<string, SimFeature> = {
	"thread.fork": "threadFork",
	"prepared-run.retry": "preparedRunRetry",
	"queued-run.edit": "queuedRunEdit",
};
const LAUNCH_REQUIRED = [
	"commandId",
	"projectId",
	"title",
	"modelSelection",
	"runtimeMode",
	"interactionMode",
	"workspaceStrategy",
];

/** Effect Schema's rendering of a missing property (OBSERVED.md §5.8). */
function missingKey(
	payload: Record<string, unknown>,
	keys: string[],
): string | undefined {
	const key = keys.find((k) => !(k in payload) || payload[k] === undefined);
	return key === undefined ? undefined : `Missing key\n  at ["${key}"]`;
}

const unionText = `Expected ${Object.keys(REQUIRED)
	.map((type) => `{ readonly "type": "${type}", ... }`)
	.join(" | ")}`;

export function createEngine(deps: {
	store: Store;
	scheduler: Scheduler;
	stepMs: number;
	/** Which T3 Code the engine imitates (compat.ts); default "current". */
	compat?: SimCompat;
	/** false: a server without queue holding (OBSERVED.md §6.4 15): `holdQueue` is ignored, no `queue.resume`. */
	queueHolding?: boolean;
	/** Attachments persisted by `assets.persistChatAttachments`, which messages refer to. */
	attachments?: AttachmentStore;
}): Engine {
	const { store, scheduler } = deps;
	const queueHolding = deps.queueHolding !== false;
	const compat = deps.compat ?? "current";
	const receipts = new Map<
		string,
		{ outcome: Outcome; threadId?: string; launch?: boolean }
	>();
	const handles = new Map<string, RunHandle>();
	const heldQueues = new Set<string>();

	const kit: RunKit = {
		store,
		scheduler,
		stepMs: deps.stepMs,
		compat: deps.compat ?? "current",
		workspaceRoot: (thread) =>
			String(
				store.projects.get(thread.app.projectId as string)?.row.workspaceRoot ??
					"/srv/t3",
			),
		onRunFinished(thread) {
			for (const [id, h] of handles)
				if (
					h.thread === thread &&
					TERMINAL_RUN_STATUSES.has(h.run.status as string)
				)
					handles.delete(id);
			// The hold was applied when the interrupt was accepted: a queue.resume that came
			// before the run ended has released it, and the run's end must not hold it again.
			if (!heldQueues.has(thread.id)) startNextQueued(thread);
		},
		selfDispatch: (command) => void dispatch(command),
	};

	/**
	 * Holds or releases a thread's queue. Held queued runs say so in their row (`queueHeld`,
	 * PROTOCOL.md §7.3), so readers can tell a held queue from one about to move.
	 */
	function holdQueuedRuns(thread: ThreadState, held: boolean): void {
		if (held) heldQueues.add(thread.id);
		else heldQueues.delete(thread.id);
		for (const h of threadHandles(thread)) {
			if (h.run.status !== "queued" || h.run.queueHeld === held) continue;
			h.run = { ...h.run, queueHeld: held };
			store.upsert(thread, "runs", h.run, "run.updated", {
				runId: h.run.id,
				nodeId: h.node.id,
				providerInstanceId: h.instanceId,
			});
		}
	}

	function threadHandles(thread: ThreadState): RunHandle[] {
		return [...handles.values()].filter((h) => h.thread === thread);
	}

	function startNextQueued(thread: ThreadState): void {
		if (
			threadHandles(thread).some(
				(h) =>
					BUSY_RUN_STATUSES.has(h.run.status as string) &&
					h.run.status !== "queued",
			)
		)
			return;
		const queued = threadHandles(thread)
			.filter((h) => h.run.status === "queued")
			.sort((a, b) => (a.run.ordinal as number) - (b.run.ordinal as number));
		const next = queued[0];
		if (!next) return;
		next.run = { ...next.run, status: "starting", queuePosition: null };
		store.upsert(thread, "runs", next.run, "run.updated", {
			runId: next.run.id,
			nodeId: next.node.id,
			providerInstanceId: next.instanceId,
		});
		queued.slice(1).forEach((h, index) => {
			h.run = { ...h.run, queuePosition: index + 1 };
		});
		void driveRun(kit, next, pickScript(next.prompt));
	}

	function startRun(thread: ThreadState, input: NewRunInput): number {
		const { handle, sequence } = createRun(kit, thread, input);
		handles.set(handle.run.id, handle);
		// A follow-up joining a held queue is held with it.
		if (input.status === "queued" && heldQueues.has(thread.id))
			holdQueuedRuns(thread, true);
		if (thread.app.activeProviderThreadId == null) {
			thread.app = {
				...thread.app,
				activeProviderThreadId: handle.run.providerThreadId,
				updatedAt: nowIso(),
			};
			store.appendThreadEvent(thread, "thread.metadata-updated", {
				providerInstanceId: handle.instanceId,
			});
		}
		if (input.status !== "queued")
			void driveRun(kit, handle, pickScript(input.text));
		return Math.max(sequence, store.head());
	}

	/** The run a steer or restart would target: the newest one preparing, starting or running. */
	function activeRun(
		thread: ThreadState,
	): { id: string; status: string; instanceId: string } | undefined {
		const active = threadHandles(thread)
			.filter(
				(h) =>
					!h.interrupting &&
					["preparing", "starting", "running"].includes(String(h.run.status)),
			)
			.sort((a, b) => Number(b.run.ordinal) - Number(a.run.ordinal))[0];
		return active
			? {
					id: active.run.id,
					status: String(active.run.status),
					instanceId: active.instanceId,
				}
			: undefined;
	}

	/** A message's attachment references, each one persisted first (attachments.ts); or why not. */
	function attachmentRefs(raw: unknown): Row[] | string {
		if (!Array.isArray(raw) || raw.length === 0) return [];
		const refs: Row[] = [];
		for (const ref of raw as Row[]) {
			const stored = deps.attachments?.get(String(ref?.id));
			if (!stored) return `Attachment ${String(ref?.id)} was not persisted.`;
			refs.push(stored);
		}
		return refs;
	}

	function pendingRequest(thread: ThreadState): boolean {
		return thread.rows.runtimeRequests.some((r) => r.status === "pending");
	}

	function isBusy(thread: ThreadState): boolean {
		return thread.rows.runs.some((r) =>
			BUSY_RUN_STATUSES.has(r.status as string),
		);
	}

	function newThread(
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
			branch: input.branch ?? null,
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

	function setApp(
		thread: ThreadState,
		patch: Record<string, unknown>,
		type: string,
	): number {
		thread.app = { ...thread.app, ...patch, updatedAt: nowIso() };
		return store.appendThreadEvent(thread, type, {
			providerInstanceId: String(thread.app.providerInstanceId),
		});
	}

	/**
	 * `steer_active` / `restart_active` (PROTOCOL.md §6.3): the outcome, or undefined when a
	 * steer raced the end of its target and becomes an ordinary `start_immediately`.
	 */
	function steerOrRestart(
		thread: ThreadState,
		c: Record<string, unknown>,
		mode: Record<string, unknown>,
	): number | string | undefined {
		const targetRunId = String(mode.targetRunId);
		const target = store.find(thread, "runs", targetRunId);
		if (!target) return `Target run ${targetRunId} was not found.`;
		const h = handles.get(targetRunId);
		const status = String(h?.run.status ?? target.status);
		const message = {
			messageId: String(c.messageId),
			text: String(c.text),
			createdBy: "user",
			creationSource: String(c.creationSource),
		};
		if (mode.type === "steer_active") {
			if (!h || status === "waiting" || TERMINAL_RUN_STATUSES.has(status))
				return undefined;
			if (status !== "running" || h.interrupting)
				return `Target run ${targetRunId} is not running; only a running run can be steered.`;
			if (!steersLive(h.instanceId))
				return `Provider ${h.instanceId} does not support steering an active turn; it steers only by interrupt and restart (restart_active).`;
			return steerRun(kit, h, message);
		}
		if (
			!h ||
			h.interrupting ||
			!["preparing", "starting", "running"].includes(status)
		)
			return `Target run ${targetRunId} is not active.`;
		return restartRun(kit, h, message);
	}

	/** Execute one validated command; returns the last sequence it wrote, or a failure message. */
	function execute(c: Record<string, unknown>, type: string): number | string {
		const threadId = String(c.threadId);
		if (type === "thread.fork") return forkThread(store, newThread, c);
		if (type === "thread.create") {
			if (store.threads.has(threadId))
				return `Thread ${threadId} already exists.`;
			return newThread(c, String(c.creationSource)).lastSequence;
		}
		const thread = store.threads.get(threadId);
		if (!thread || thread.app.deletedAt)
			return `Failed to load orchestration projection for thread ${threadId}.`;
		switch (type) {
			case "message.dispatch": {
				let mode = (c.dispatchMode ?? {}) as Record<string, unknown>;
				// The pre-release engine drops `deliveryIntent` unread (compat.ts).
				const intent = simHas(compat, "deliveryIntent")
					? c.deliveryIntent
					: undefined;
				if (
					typeof intent === "string" &&
					(mode.type === "start_immediately" ||
						mode.type === "queue_after_active")
				)
					mode = resolveDeliveryIntent(intent, activeRun(thread));
				if (mode.type === "steer_active" || mode.type === "restart_active") {
					const steered = steerOrRestart(thread, c, mode);
					if (steered !== undefined) return steered;
				}
				const busy = isBusy(thread);
				const instance = String(thread.app.providerInstanceId);
				if (
					busy &&
					mode.type !== "queue_after_active" &&
					!queuesMessages(instance)
				)
					return `Provider ${instance} does not accept queued messages while a run is active; send the message with queue_after_active to queue it on the server.`;
				const attachments = attachmentRefs(c.attachments);
				if (typeof attachments === "string") return attachments;
				return startRun(thread, {
					messageId: String(c.messageId),
					text: String(c.text),
					attachments,
					modelSelection:
						(c.modelSelection as Row | undefined) ??
						(thread.app.modelSelection as Row),
					createdBy: "user", // the socket handler forces createdBy (OBSERVED.md §4)
					creationSource: String(c.creationSource),
					status: busy ? "queued" : "starting",
					inputIntent: busy ? "queued_turn" : "turn_start",
					...(typeof c.notification === "object" && c.notification !== null
						? { notification: c.notification as Record<string, unknown> }
						: {}),
				});
			}
			case "run.interrupt": {
				const runId = String(c.runId);
				const h = handles.get(runId);
				if (
					!h ||
					h.thread !== thread ||
					h.interrupting ||
					TERMINAL_RUN_STATUSES.has(h.run.status as string)
				) {
					return `Run ${runId} is not interruptible.`;
				}
				if (h.run.status === "queued") {
					cancelRun(kit, h);
					handles.delete(runId);
					return store.head();
				}
				// The hold is part of the command: queued runs show it before the run has ended.
				const hold = queueHolding && c.holdQueue === true;
				if (hold) holdQueuedRuns(thread, true);
				return interruptRun(
					kit,
					h,
					c.reason === undefined ? undefined : String(c.reason),
					hold,
				);
			}
			case "runtime-request.respond": {
				const requestId = String(c.requestId);
				const request = store.find(thread, "runtimeRequests", requestId);
				if (!request) return `Runtime request ${requestId} was not found.`;
				if (request.status !== "pending")
					return `Runtime request ${requestId} is not pending.`;
				const refused = respondRefusal(thread, request, c.decision);
				if (refused) return refused;
				const node = store.find(thread, "nodes", request.nodeId as string);
				const h = node ? handles.get(node.runId as string) : undefined;
				const response: {
					decision?: string;
					answers?: Record<string, unknown>;
				} = {};
				if (c.decision !== undefined) response.decision = String(c.decision);
				if (c.answers !== undefined)
					response.answers = c.answers as Record<string, unknown>;
				return resolveRequest(kit, h, thread, request, response);
			}
			case "thread.user-input.dismiss": {
				const requestId = String(c.requestId);
				const request = store.find(thread, "runtimeRequests", requestId);
				if (!request) return `Runtime request ${requestId} was not found.`;
				const node = store.find(thread, "nodes", request.nodeId as string);
				const h = node ? handles.get(node.runId as string) : undefined;
				return dismissRequest(kit, h, thread, request);
			}
			case "thread.runtime-mode.set":
				return setApp(
					thread,
					{ runtimeMode: c.runtimeMode },
					"thread.runtime-mode-updated",
				);
			case "thread.interaction-mode.set":
				return setApp(
					thread,
					{ interactionMode: c.interactionMode },
					"thread.interaction-mode-updated",
				);
			case "thread.model-selection.set":
				return setApp(
					thread,
					{ modelSelection: c.modelSelection },
					"thread.model-selection-updated",
				);
			case "thread.metadata.update": {
				const patch: Record<string, unknown> = {};
				for (const key of ["title", "branch", "worktreePath"])
					if (c[key] !== undefined) patch[key] = c[key];
				return setApp(thread, patch, "thread.metadata-updated");
			}
			case "thread.archive":
				if (isBusy(thread))
					return `Thread ${threadId} cannot be archived while it is working.`;
				// A command that would write no event is rejected (PROTOCOL.md §6.1).
				if (thread.app.archivedAt)
					return `Thread ${threadId} is already archived.`;
				return setApp(thread, { archivedAt: nowIso() }, "thread.archived");
			case "thread.unarchive":
				if (!thread.app.archivedAt)
					return `Thread ${threadId} is not archived.`;
				return setApp(thread, { archivedAt: null }, "thread.unarchived");
			case "thread.settle":
				if (pendingRequest(thread))
					return `Thread ${threadId} cannot be settled while a runtime request is pending.`;
				if (thread.app.settledOverride === "settled")
					return `Thread ${threadId} is already settled.`;
				return setApp(
					thread,
					{
						settledOverride: "settled",
						settledAt: typeof c.settledAt === "string" ? c.settledAt : nowIso(),
					},
					"thread.settled",
				);
			case "thread.unsettle":
				if (thread.app.settledOverride !== "settled")
					return `Thread ${threadId} is not settled.`;
				return setApp(
					thread,
					{ settledOverride: "active", settledAt: null, unsettledAt: nowIso() },
					"thread.unsettled",
				);
			case "provider-session.detach":
				return detachSession(
					store,
					thread,
					String(c.providerSessionId),
					c.reason === undefined ? undefined : String(c.reason),
				);
			case "thread.delete":
				// The delete is the command's event; runs still going are cancelled in reaction to it.
				setApp(thread, { deletedAt: nowIso() }, "thread.deleted");
				for (const h of threadHandles(thread)) {
					cancelRun(kit, h);
					handles.delete(h.run.id);
				}
				return store.head();
			case "queue.resume":
				holdQueuedRuns(thread, false);
				startNextQueued(thread);
				return store.head();
			case "thread.snooze":
				return setApp(
					thread,
					{ snoozedUntil: String(c.snoozedUntil), snoozedAt: nowIso() },
					"thread.snoozed",
				);
			case "thread.unsnooze":
				return setApp(
					thread,
					{ snoozedUntil: null, snoozedAt: null },
					"thread.unsnoozed",
				);
			case "queued-run.edit": {
				const runId = String(c.runId);
				return editQueuedRun(
					kit,
					handles.get(runId),
					runId,
					String(c.text),
					c.attachments === undefined
						? undefined
						: (attachmentRefs(c.attachments) as Row[]),
				);
			}
			case "queued-run.cancel": {
				const h = handles.get(String(c.runId));
				if (h?.run.status !== "queued")
					return `Run ${String(c.runId)} is not queued.`;
				cancelRun(kit, h);
				handles.delete(h.run.id);
				return store.head();
			}
			case "prepared-run.retry":
				return retryPreparation(kit, thread, String(c.runId), (h) =>
					handles.set(h.run.id, h),
				);
			default:
				return `Unsupported command ${type}.`;
		}
	}

	function dispatch(c: Record<string, unknown>): Outcome {
		const type = typeof c.type === "string" ? c.type : "";
		const newer = NEWER_COMMANDS[type];
		const required =
			(type === "queue.resume" && !queueHolding) ||
			(newer !== undefined && !simHas(compat, newer))
				? undefined
				: REQUIRED[type];
		if (!required) return { die: unionText };
		const missing = missingKey(c, required);
		if (missing) return { die: missing };
		// Decoded like any literal field: an unknown value dies before the command runs.
		if (
			type === "message.dispatch" &&
			simHas(compat, "deliveryIntent") &&
			c.deliveryIntent !== undefined &&
			!(DELIVERY_INTENTS as readonly unknown[]).includes(c.deliveryIntent)
		)
			return {
				die: `Expected ${DELIVERY_INTENTS.map((i) => `"${i}"`).join(" | ")}, got ${JSON.stringify(c.deliveryIntent)}\n  at ["deliveryIntent"]`,
			};
		const commandId = String(c.commandId);
		const receipt = receipts.get(commandId);
		// Replays return the original result, whatever the payload says (OBSERVED.md §5.8).
		if (receipt && !receipt.launch) return receipt.outcome;
		const result = execute(c, type);
		const outcome: Outcome =
			typeof result === "number"
				? { ok: { sequence: result } }
				: {
						fail: {
							_tag: "OrchestrationV2DispatchCommandError",
							commandId,
							commandType: type,
							message: result,
							detail: result,
						},
					};
		receipts.set(commandId, { outcome });
		return outcome;
	}

	function launch(input: Record<string, unknown>): Outcome {
		const missing = missingKey(input, LAUNCH_REQUIRED);
		if (missing) return { die: missing };
		const commandId = String(input.commandId);
		const receipt = receipts.get(commandId);
		if (receipt?.launch) {
			if (!receipt.threadId) return receipt.outcome;
			const thread = store.threads.get(receipt.threadId);
			if (!thread) return receipt.outcome;
			return {
				ok: {
					threadId: thread.id,
					projection: store.projection(thread),
					resumed: true,
				},
			};
		}
		const projectId = String(input.projectId);
		const fail = (stage: string, cause: string): Outcome => {
			const message = `Thread launch ${commandId} failed during ${stage}.`;
			const outcome = {
				fail: {
					_tag: "OrchestrationV2ThreadLaunchError",
					commandId,
					projectId,
					message,
					cause: { name: "ThreadLaunchError", message, cause },
				},
			};
			receipts.set(commandId, { outcome, launch: true });
			return outcome;
		};
		if (!store.projects.has(projectId))
			return fail("resolve-project", "Project not found.");
		const requested =
			input.threadId === undefined ? undefined : String(input.threadId);
		let thread = requested ? store.threads.get(requested) : undefined;
		if (thread) {
			const empty = thread.rows.runs.length === 0 && !thread.app.deletedAt;
			if (!(input.reuseExistingThread === true && empty)) {
				return fail("create-thread", `Thread ${thread.id} already exists.`);
			}
		} else {
			const strategy = input.workspaceStrategy as
				| Record<string, unknown>
				| undefined;
			const refused = refuseStrategy(store, projectId, strategy);
			if (refused) return fail("prepare-workspace", refused);
			thread = newThread(input, String(input.creationSource ?? "web"));
			placeThread(store, thread, strategy);
		}
		const initial = input.initialMessage as Record<string, unknown> | undefined;
		if (initial && typeof initial.text === "string") {
			const attachments = attachmentRefs(initial.attachments);
			if (typeof attachments === "string")
				return fail("create-message", attachments);
			startRun(thread, {
				messageId: String(initial.messageId ?? newId()),
				text: initial.text,
				attachments,
				modelSelection: input.modelSelection as Row,
				createdBy: "user",
				creationSource: String(input.creationSource ?? "web"),
				status: isBusy(thread) ? "queued" : "preparing",
				inputIntent: "turn_start",
			});
			if (input.generateTitle === true && simHas(compat, "generateTitle")) {
				const title = generatedTitle(initial.text);
				const target = thread;
				scheduler.later(deps.stepMs, () => {
					if (!target.app.deletedAt)
						setApp(target, { title }, "thread.metadata-updated");
				});
			}
		}
		const outcome: Outcome = {
			ok: {
				threadId: thread.id,
				projection: store.projection(thread),
				resumed: false,
			},
		};
		receipts.set(commandId, { outcome, threadId: thread.id, launch: true });
		return outcome;
	}

	return {
		dispatch,
		launch,
		getProjection(threadId) {
			const thread = store.threads.get(threadId);
			if (!thread || thread.app.deletedAt) {
				return {
					fail: {
						_tag: "OrchestrationV2GetThreadProjectionError",
						threadId,
						message: `Failed to load orchestration V2 thread ${threadId}.`,
					},
				};
			}
			return { ok: store.projection(thread) };
		},
		finishRun(threadId) {
			const thread = store.threads.get(threadId);
			if (thread) {
				endBackgroundTasks(thread);
				resumeAfterLimitNow(thread);
			}
			for (const h of handles.values()) {
				if (h.thread.id !== threadId) continue;
				if (resolveElsewhere(kit, h)) continue;
				if (h.release) h.release();
				else h.finishRequested = true;
			}
		},
		cancelAll,
		wipe() {
			cancelAll();
			receipts.clear();
			heldQueues.clear();
			store.wipeThreads();
		},
	};

	function cancelAll(): void {
		for (const h of handles.values())
			if (!TERMINAL_RUN_STATUSES.has(h.run.status as string)) cancelRun(kit, h);
		handles.clear();
	}
}
