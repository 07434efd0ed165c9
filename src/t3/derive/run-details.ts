/**
 * A run's timeline as the tools show it (PROTOCOL.md §7.3): its turn items in order, the final
 * assistant text, and its messages, tool calls, notices and changed files. Pure functions over
 * the projection's rows.
 */

import type { ThreadProjection, TurnItem } from "../model.ts";

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

/** A run's talk, not its steps. */
const NOT_STEPS = new Set(["user_message", "assistant_message", "checkpoint"]);

/**
 * What the run is doing now: the title of its latest tool call or activity (a notice, a titled
 * item such as workspace preparation), or null before it has one. T3's text: callers mask and
 * cap it (capText).
 */
export function currentStep(
	projection: ThreadProjection,
	runId: string,
): string | null {
	const items = itemsOfRun(projection, runId);
	for (let i = items.length - 1; i >= 0; i--) {
		const item = items[i] as TurnItem;
		if (NOT_STEPS.has(item.type)) continue;
		if (TOOL_TYPES.has(item.type)) return toolTitle(item);
		const text =
			item.type === "notification" || item.type === "system_notice"
				? noticeText(item)
				: item.title;
		if (typeof text === "string" && text.length > 0) return text;
	}
	return null;
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
