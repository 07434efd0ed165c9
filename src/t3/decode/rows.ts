/** The rows of a thread projection (PROTOCOL.md §7.3): runs, messages, turn items, requests. */
import type {
	ConversationMessage,
	ProviderSession,
	Run,
	RuntimeRequest,
	TurnItem,
	UserInputQuestion,
} from "../model.ts";
import {
	arr,
	isRecord,
	num,
	record,
	requireId,
	str,
	strOrNull,
} from "./json.ts";
import { decodeModelSelection } from "./model-selection.ts";

export function decodeRun(raw: unknown): Run {
	const obj = record(raw, "run");
	return {
		...obj,
		id: requireId(obj, "run"),
		threadId: str(obj.threadId) ?? "",
		ordinal: num(obj.ordinal) ?? 0,
		userMessageId: strOrNull(obj.userMessageId),
		status: str(obj.status) ?? "unknown",
		requestedAt: strOrNull(obj.requestedAt),
		startedAt: strOrNull(obj.startedAt),
		completedAt: strOrNull(obj.completedAt),
		modelSelection: decodeModelSelection(obj.modelSelection),
		queueHeld: obj.queueHeld === true,
		queuePosition: num(obj.queuePosition) ?? null,
	};
}

export function decodeMessage(raw: unknown): ConversationMessage {
	const obj = record(raw, "message");
	const out: ConversationMessage = {
		...obj,
		id: requireId(obj, "message"),
		runId: strOrNull(obj.runId),
		role: str(obj.role) ?? "unknown",
		text: str(obj.text) ?? "",
	};
	if (typeof obj.streaming !== "boolean") delete out.streaming;
	return out;
}

function decodeQuestion(raw: unknown, index: number): UserInputQuestion {
	const obj = isRecord(raw) ? raw : {};
	const options = arr(obj.options)
		.filter(isRecord)
		.map((o) => {
			const label = str(o.label) ?? str(o.value) ?? "";
			const opt: { label: string; description?: string; value?: string } = {
				...o,
				label,
			};
			if (typeof o.description !== "string") delete opt.description;
			if (typeof o.value !== "string") delete opt.value;
			return opt;
		});
	const q: UserInputQuestion = {
		...obj,
		id: str(obj.id) ?? String(index),
		question: str(obj.question) ?? str(obj.text) ?? "",
		options,
	};
	if (typeof obj.header !== "string") delete q.header;
	for (const key of ["multiSelect", "allowCustomAnswer", "required"] as const) {
		if (typeof obj[key] !== "boolean") delete q[key];
	}
	return q;
}

export function decodeTurnItem(raw: unknown): TurnItem {
	const obj = record(raw, "turn item");
	const item: TurnItem = {
		...obj,
		id: requireId(obj, "turn item"),
		type: str(obj.type) ?? "unknown",
		runId: strOrNull(obj.runId),
	};
	if (Array.isArray(obj.questions))
		item.questions = obj.questions.map(decodeQuestion);
	if (obj.options !== undefined && !Array.isArray(obj.options))
		delete item.options;
	if (obj.files !== undefined && !Array.isArray(obj.files)) delete item.files;
	if (
		obj.failure !== undefined &&
		obj.failure !== null &&
		!isRecord(obj.failure)
	)
		delete item.failure;
	return item;
}

export function decodeRuntimeRequest(raw: unknown): RuntimeRequest {
	const obj = record(raw, "runtime request");
	return {
		...obj,
		id: requireId(obj, "runtime request"),
		kind: str(obj.kind) ?? "unknown",
		status: str(obj.status) ?? "unknown",
	};
}

export function decodeProviderSession(raw: unknown): ProviderSession {
	const obj = record(raw, "provider session");
	return { ...obj, id: requireId(obj, "provider session") };
}
