/** Conversions from T3 read models to the result shapes of CONTRACT.md "Tools". */
import type { PendingQuestionView } from "../t3/derive/derive.ts";
import type { ModelSelection, ProjectShell } from "../t3/model.ts";

export interface ProjectRef {
	id: string;
	title: string;
	path: string;
}

export function projectRef(project: ProjectShell): ProjectRef {
	return { id: project.id, title: project.title, path: project.workspaceRoot };
}

export function modelName(
	selection: ModelSelection | null | undefined,
): string | null {
	return selection ? `${selection.instanceId}/${selection.model}` : null;
}

/** A short thread title derived from the prompt: its first line, at most 60 characters. */
export function titleFromPrompt(prompt: string): string {
	const line = prompt.trim().split("\n")[0]?.trim() ?? "";
	if (line.length <= 60) return line || "t3code-mcp thread";
	return `${line.slice(0, 59).trimEnd()}…`;
}

export type QuestionShape = Omit<
	PendingQuestionView,
	"request_kind" | "decision_wire"
>;

/** The contract's `question` object (without the raw request kind the derivation keeps). */
export function questionShape(
	view: PendingQuestionView | null,
): QuestionShape | null {
	if (!view) return null;
	// In the contract's order, so every tool and event shows the same shape.
	return {
		request_id: view.request_id,
		kind: view.kind,
		prompt: view.prompt,
		answerable: view.answerable,
		reason: view.reason,
		dismissable: view.dismissable,
		questions: view.questions,
		decisions: view.decisions,
		app_name: view.app_name,
	};
}

/**
 * T3's own link to a thread (`t3-thread://v1/<id>`, CONTRACT.md "Faithful edges"): a person
 * opens it in T3's app. The id is percent-encoded, so no id can change the link's shape.
 */
export const appUrl = (threadId: string): string =>
	`t3-thread://v1/${encodeURIComponent(threadId)}`;
