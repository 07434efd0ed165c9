/**
 * What a user wants to know about a thread, derived from the read models (PROTOCOL.md §7.4,
 * OBSERVED.md §5.6–§5.7): run outcome, final answer, failure text, the pending question or
 * approval, and a run's timeline. Pure functions; used by the MCP tools and by events.
 */

import { maskAndCap, redact } from "../../util/redact.ts";
import {
	BUSY_RUN_STATUSES,
	type PendingRuntimeRequest,
	type Run,
	type RuntimeRequest,
	type ThreadProjection,
	type ThreadShell,
	type TurnItem,
	type UserInputQuestion,
} from "../model.ts";
import { currentErrorItems } from "./current-errors.ts";
import {
	approvalDecisions,
	type DecisionView,
	type DecisionWire,
	type QuestionKind,
	questionKind,
	unanswerableReason,
} from "./request-kinds.ts";

export type RunOutcome = "completed" | "interrupted" | "failed";

/** The terminal outcome of a run status, or null while the run is not finished. */
export function runOutcome(status: string): RunOutcome | null {
	switch (status) {
		case "completed":
			return "completed";
		case "interrupted":
		case "cancelled":
		case "rolled_back":
			return "interrupted";
		case "failed":
			return "failed";
		default:
			return null;
	}
}

/**
 * The run a message of ours started (`run.userMessageId`, §5.1), or was steered into (the
 * message's `runId`, §7.3); null when not there yet.
 */
export function findRunByMessageId(
	projection: ThreadProjection,
	messageId: string,
): Run | null {
	const started = projection.runs.find((r) => r.userMessageId === messageId);
	if (started) return started;
	const runId = projection.messages.find((m) => m.id === messageId)?.runId;
	return runId ? (projection.runs.find((r) => r.id === runId) ?? null) : null;
}

/** The run with the highest ordinal. */
export function latestRun(projection: ThreadProjection): Run | null {
	let best: Run | null = null;
	for (const run of projection.runs)
		if (!best || run.ordinal > best.ordinal) best = run;
	return best;
}

/** A thread shell's activity summary (PROTOCOL.md §7.2). */
export interface ThreadActivity {
	latestRunId: string | null;
	activeRunId: string | null;
	status: string;
	pendingRuntimeRequest: PendingRuntimeRequest | null;
}

/** Runtime-request kinds whose details live only in a turn item (OBSERVED.md §5.7). */
const ITEM_KINDS = new Set([
	"user_input",
	"command",
	"file-read",
	"file-change",
	"mcp-elicitation",
	"permission",
]);

/**
 * A thread's activity summary from its rows, as T3 derives its shell's (§7.2, §7.4): the
 * latest run's status ("idle" without runs), the run blocking the thread, and the newest
 * pending request once its turn item (which holds the question or the approval prompt) is
 * there too. The one derivation behind every thread status shown: T3's shells carry it, its
 * projections (an AppThread without the summary) get it from here.
 */
export function threadActivity(
	runs: readonly Run[],
	requests: readonly RuntimeRequest[],
	hasItem: (requestId: string) => boolean,
): ThreadActivity {
	let latest: Run | null = null;
	let active: Run | null = null;
	for (const run of runs) {
		if (!latest || run.ordinal > latest.ordinal) latest = run;
		if (
			BUSY_RUN_STATUSES.has(run.status) &&
			run.status !== "queued" &&
			(!active || run.ordinal < active.ordinal)
		)
			active = run;
	}
	let pending: PendingRuntimeRequest | null = null;
	for (const request of requests) {
		if (request.status !== "pending") continue;
		if (ITEM_KINDS.has(request.kind) && !hasItem(request.id)) continue;
		pending = { id: request.id, kind: request.kind };
		if (typeof request.createdAt === "string")
			pending.createdAt = request.createdAt;
	}
	return {
		latestRunId: latest?.id ?? null,
		activeRunId: active?.id ?? null,
		status: latest ? latest.status : "idle",
		pendingRuntimeRequest: pending,
	};
}

function itemsOfRun(projection: ThreadProjection, runId: string): TurnItem[] {
	return projection.turnItems
		.filter((item) => item.runId === runId)
		.sort((a, b) => (a.ordinal ?? 0) - (b.ordinal ?? 0));
}

/**
 * The run's final assistant text: the last non-streaming `assistant_message` turn item by
 * ordinal, else the last assistant message row of the run. Rows are whole-row upserts, so
 * the text is never concatenated (§7.3).
 */
export function finalAssistantMessage(
	projection: ThreadProjection,
	runId: string,
): string | null {
	const items = itemsOfRun(projection, runId).filter(
		(i) =>
			i.type === "assistant_message" &&
			i.streaming !== true &&
			typeof i.text === "string",
	);
	const lastItem = items.at(-1);
	if (lastItem?.text !== undefined) return lastItem.text;
	const messages = projection.messages.filter(
		(m) => m.role === "assistant" && m.runId === runId,
	);
	const final =
		messages.filter((m) => m.streaming !== true).at(-1) ?? messages.at(-1);
	return final ? final.text : null;
}

/**
 * The failure text of a run, only while it belongs to the run's current state
 * (current-errors.ts): its current `error` items, else — for a failed run that is the thread's
 * latest — the shell's `lastError`. None while the run is busy or once it completed, even if an
 * earlier attempt failed (a retried workspace preparation). It comes from the provider or T3
 * (it may quote a credential), so it is redacted and capped like all outside text.
 */
export function runError(
	projection: ThreadProjection,
	runId: string,
	shell?: ThreadShell,
): string | null {
	for (const item of currentErrorItems(projection, runId)) {
		const text = item.failure?.message ?? item.message ?? item.title;
		if (typeof text === "string" && text.length > 0) return redact(text);
	}
	const run = projection.runs.find((r) => r.id === runId);
	const thread = shell ?? projection.thread;
	const latest = thread.latestRunId == null || thread.latestRunId === runId;
	if (run?.status !== "failed" || !latest) return null;
	const lastError = shell?.lastError ?? projection.thread.lastError;
	return typeof lastError === "string" && lastError.length > 0
		? redact(lastError)
		: null;
}

/**
 * The ordinal up to which runs are settled: the latest run's if it has finished, else the one
 * before it. Runs at or below it never produce events for a thread that starts being watched.
 */
export function settledOrdinal(projection: ThreadProjection): number {
	const latest = latestRun(projection);
	if (!latest) return 0;
	return latest.completedAt ? latest.ordinal : latest.ordinal - 1;
}

export interface PendingQuestionView {
	request_id: string;
	kind: QuestionKind;
	/** The raw runtime-request kind (`user_input`, `command`, `file-change`, …). */
	request_kind: string;
	prompt: string;
	/** False for requests nobody can answer through t3code-mcp (request-kinds.ts). */
	answerable: boolean;
	/** When not answerable: what a person must do, and where. */
	reason: string | null;
	/** T3 lets this request be closed unanswered: message-mode requests only (§6.6). */
	dismissable: boolean;
	questions: {
		id: string;
		header: string;
		text: string;
		options: string[];
		multi_select: boolean;
		allow_custom: boolean;
		/** False for a question the user may leave unanswered (`required: false`, §6.6). */
		required: boolean;
	}[];
	/** Approvals only (else null): what T3 offers, accept and decline when it lists none. */
	decisions: DecisionView[] | null;
	/** The app asking, for approvals that name one (mcp-elicitation); else null. */
	app_name: string | null;
	/** How each offered decision is sent back (T3's camelCase value). */
	decision_wire: DecisionWire;
}

/** Where a request is, for the reasons of unanswerable ones. */
export interface QuestionContext {
	machine?: string;
}

function requestItem(
	projection: ThreadProjection,
	requestId: string,
): TurnItem | undefined {
	return projection.turnItems.find(
		(i) =>
			i.requestId === requestId &&
			(i.type === "user_input_request" || i.type === "approval_request"),
	);
}

/**
 * The pending question or approval. `shellPending` (the shell's `pendingRuntimeRequest`)
 * wins when given, `null` meaning "none"; otherwise the newest pending runtime request of
 * the projection. The question text lives only in the turn item (OBSERVED.md §5.7).
 */
export function pendingQuestion(
	projection: ThreadProjection,
	shellPending?: PendingRuntimeRequest | null,
	context: QuestionContext = {},
): PendingQuestionView | null {
	const newestPending = () =>
		projection.runtimeRequests.filter((r) => r.status === "pending").at(-1);
	let request: { id: string; kind: string } | undefined;
	if (shellPending !== undefined) {
		if (shellPending === null) return null;
		// The shell may lag the projection: a request the projection shows resolved is over.
		const known = projection.runtimeRequests.find(
			(r) => r.id === shellPending.id,
		);
		request =
			known && known.status !== "pending" ? newestPending() : shellPending;
	} else {
		request = newestPending();
	}
	if (!request) return null;
	const item = requestItem(projection, request.id);
	const id = request.id;
	const row = projection.runtimeRequests.find((r) => r.id === id);
	const capability = row?.responseCapability as { type?: unknown } | undefined;
	const toolItem =
		request.kind === "dynamic_tool_call" && row
			? projection.turnItems.find(
					(i) => i.type === "dynamic_tool" && i.nodeId === row.nodeId,
				)
			: undefined;
	const toolName =
		typeof toolItem?.toolName === "string" ? toolItem.toolName : undefined;
	const reason = unanswerableReason(request, row, {
		...(context.machine ? { machine: context.machine } : {}),
		provider:
			projection.thread.modelSelection?.instanceId ??
			(typeof projection.thread.providerInstanceId === "string"
				? projection.thread.providerInstanceId
				: null),
		...(toolName ? { toolName } : {}),
	});
	const common = {
		request_id: request.id,
		request_kind: request.kind,
		answerable: reason === null,
		reason,
		decisions: null,
		app_name: null,
		decision_wire: {},
	};
	const dismissable =
		request.kind === "user_input" &&
		(capability?.type === "message" || item?.responseMode === "message");
	if (request.kind === "user_input") {
		const questions = (item?.questions ?? []).map((q: UserInputQuestion) => ({
			id: q.id,
			header: q.header ?? "",
			text: q.question,
			options: q.options.map((o) => o.label),
			// Pre-release questions have neither flag: single choice, free text allowed (§7.3).
			multi_select: q.multiSelect === true,
			allow_custom: q.allowCustomAnswer !== false,
			required: q.required !== false,
		}));
		return {
			...common,
			kind: "user_input",
			prompt: questions.map((q) => q.text).join("\n"),
			dismissable: dismissable && reason === null,
			questions,
		};
	}
	if (request.kind === "auth_refresh" || request.kind === "dynamic_tool_call") {
		return {
			...common,
			kind: questionKind(request.kind),
			prompt:
				request.kind === "auth_refresh"
					? "The provider must be signed in again."
					: `The agent called the client-side tool${toolName ? ` "${redact(toolName)}"` : ""}.`,
			dismissable: false,
			questions: [],
		};
	}
	const requestKind = item?.requestKind ?? request.kind;
	const prompt =
		item?.prompt ?? item?.title ?? `approval requested (${requestKind})`;
	const { decisions, wire } = approvalDecisions(item);
	return {
		...common,
		kind: "approval",
		prompt,
		dismissable: false,
		questions: [],
		decisions,
		app_name:
			typeof item?.appName === "string" && item.appName.length > 0
				? redact(item.appName)
				: null,
		decision_wire: wire,
	};
}

/** Map an option label to the value to answer with: its `value` when present, else the label. */
export function questionOptionValue(
	projection: ThreadProjection,
	requestId: string,
	questionId: string,
	label: string,
): string {
	const question = requestItem(projection, requestId)?.questions?.find(
		(q) => q.id === questionId,
	);
	const option = question?.options.find((o) => o.label === label);
	return option?.value ?? label;
}

export interface RunDetails {
	/** `attachments`: the row's references as T3 sent them (decode them leniently). */
	messages: { role: string; text: string; attachments?: unknown }[];
	tools: {
		item_id: string;
		kind: string;
		title: string;
		status: string;
		exit_code: number | null;
		/** T3 withheld the output on the wire (read it with `orchestration.getTurnItem`). */
		output_omitted: boolean;
		/** T3's `outputIndicatesFailure`. */
		failed: boolean;
	}[];
	/** What T3 itself put in the timeline: background notifications and system notices. */
	notices: { kind: "notification" | "system_notice"; text: string }[];
	files: { path: string; change: string }[];
}

/** A notice's text: a notification's summary (and detail), a system notice's message. */
function noticeText(item: TurnItem): string | null {
	if (item.type === "system_notice")
		return typeof item.message === "string" ? item.message : null;
	const summary = typeof item.summary === "string" ? item.summary : null;
	const detail = typeof item.detail === "string" ? item.detail : null;
	if (summary && detail) return `${summary}: ${detail}`;
	return summary ?? detail;
}

const TOOL_TYPES = new Set([
	"command_execution",
	"file_change",
	"dynamic_tool",
	"web_search",
	"file_search",
]);

export function toolTitle(item: TurnItem): string {
	const candidates = [
		item.title,
		item.input,
		item.fileName,
		item.pattern,
		item.toolName,
		item.name,
	];
	for (const c of candidates)
		if (typeof c === "string" && c.length > 0) return c;
	if (Array.isArray(item.patterns))
		return item.patterns.filter((p) => typeof p === "string").join(", ");
	return item.type;
}

/** A run's messages, tool calls and changed files, in timeline order. */
export function runDetails(
	projection: ThreadProjection,
	runId: string,
): RunDetails {
	const items = itemsOfRun(projection, runId);
	let messages = projection.messages
		.filter((m) => m.runId === runId && m.streaming !== true)
		.map((m) => ({ role: m.role, text: m.text, attachments: m.attachments }));
	if (messages.length === 0) {
		messages = items
			.filter(
				(i) =>
					(i.type === "user_message" || i.type === "assistant_message") &&
					i.streaming !== true,
			)
			.map((i) => ({
				role: i.type === "user_message" ? "user" : "assistant",
				text: i.text ?? "",
				attachments: i.attachments,
			}));
	}
	const tools = items
		.filter((i) => TOOL_TYPES.has(i.type))
		.map((i) => ({
			item_id: i.id,
			kind: i.type,
			title: toolTitle(i),
			status: i.status ?? "unknown",
			exit_code: typeof i.exitCode === "number" ? i.exitCode : null,
			output_omitted: i.outputOmitted === true,
			failed: i.outputIndicatesFailure === true,
		}));
	const notices: RunDetails["notices"] = [];
	for (const item of items) {
		if (item.type !== "notification" && item.type !== "system_notice") continue;
		const text = noticeText(item);
		// T3's text: readers cap it with capText, which masks it like every T3 text.
		if (text) notices.push({ kind: item.type, text });
	}
	const files = new Map<string, string>();
	for (const item of items) {
		if (item.type === "file_change" && typeof item.fileName === "string") {
			files.set(
				item.fileName,
				typeof item.kind === "string" ? item.kind : "modified",
			);
		} else if (item.type === "checkpoint") {
			for (const f of item.files ?? []) {
				if (typeof f.path === "string") files.set(f.path, f.kind ?? "modified");
			}
		}
	}
	return {
		messages,
		tools,
		notices,
		files: [...files].map(([path, change]) => ({ path, change })),
	};
}

export const TRUNCATION_MARKER = "…[truncated]";

/**
 * `text` (from T3) with every secret masked, then cut to at most `maxChars` characters ending
 * with a visible marker when cut: masked first, so no piece of a secret survives the cut.
 */
export function capText(text: string, maxChars: number): string {
	return maskAndCap(text, maxChars, TRUNCATION_MARKER);
}
