/**
 * The pending question or approval of a thread as the tools show it (OBSERVED.md §5.7): which
 * request, its prompt and questions, whether anyone can answer it here, and the decisions an
 * approval offers. Pure functions over the projection's rows.
 */

import { redact } from "../../util/redact.ts";
import type {
	PendingRuntimeRequest,
	ThreadProjection,
	TurnItem,
	UserInputQuestion,
} from "../model.ts";
import {
	approvalDecisions,
	type DecisionView,
	type DecisionWire,
	type QuestionKind,
	questionKind,
	unanswerableReason,
} from "./request-kinds.ts";

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
