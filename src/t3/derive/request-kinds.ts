/**
 * What a pending runtime request is to someone answering through t3code-mcp (RELEASED-0.1.md §1
 * "Runtime request kinds", "Approval choices"): which question kind it is, whether it can be
 * answered here at all (and if not, what a person must do where), and for an approval the
 * decisions T3 offers with their labels and the provider's warnings.
 */
import { redact } from "../../util/redact.ts";
import type { RuntimeRequest, TurnItem } from "../model.ts";

export type QuestionKind =
	| "user_input"
	| "approval"
	| "auth_refresh"
	| "dynamic_tool";

/** The contract's snake_case decisions; T3's wire values are camelCase. */
export type Decision =
	| "accept"
	| "accept_for_session"
	| "accept_always"
	| "decline"
	| "cancel";

export const DECISIONS: readonly Decision[] = [
	"accept",
	"accept_for_session",
	"accept_always",
	"decline",
	"cancel",
];

export interface DecisionView {
	decision: string;
	label: string;
	/** The provider's caution for this option (e.g. a prompt-injection warning), or null. */
	warning: string | null;
}

/** How to send each offered decision back: snake_case → T3's value. */
export type DecisionWire = Record<string, string>;

export function questionKind(requestKind: string): QuestionKind {
	if (requestKind === "user_input") return "user_input";
	if (requestKind === "auth_refresh") return "auth_refresh";
	if (requestKind === "dynamic_tool_call") return "dynamic_tool";
	return "approval";
}

/** `acceptForSession` → `accept_for_session`; an unknown newer value converts the same way. */
export function snakeDecision(wire: string): string {
	return wire.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Plain accept and decline: what every approval takes when T3 lists no options. */
const DEFAULT_DECISIONS: { wire: string; label: string }[] = [
	{ wire: "accept", label: "Accept" },
	{ wire: "decline", label: "Decline" },
];

/** The decisions an approval offers, each with T3's label and the provider's warning. */
export function approvalDecisions(item: TurnItem | undefined): {
	decisions: DecisionView[];
	wire: DecisionWire;
} {
	const offered = Array.isArray(item?.options)
		? item.options.filter(
				(o) =>
					typeof o === "object" &&
					o !== null &&
					typeof o.decision === "string" &&
					o.decision.length > 0,
			)
		: [];
	const source =
		offered.length > 0
			? offered.map((o) => ({
					wire: o.decision,
					label: typeof o.label === "string" ? o.label : o.decision,
					warning: typeof o.warning === "string" ? o.warning : null,
				}))
			: DEFAULT_DECISIONS.map((d) => ({ ...d, warning: null }));
	const wire: DecisionWire = {};
	const decisions: DecisionView[] = [];
	for (const o of source) {
		const decision = snakeDecision(o.wire);
		if (decision in wire) continue;
		wire[decision] = o.wire;
		// Labels and warnings are the provider's text: shown, but never with a secret in them.
		decisions.push({
			decision,
			label: redact(o.label),
			warning: o.warning === null ? null : redact(o.warning),
		});
	}
	return { decisions, wire };
}

export interface Unanswerable {
	reason: string;
}

/**
 * Why a request cannot be answered through t3code-mcp, saying what a person must do and where;
 * null when it can be. `where` names the machine and the thread's provider.
 */
export function unanswerableReason(
	request: { kind: string },
	row: RuntimeRequest | undefined,
	where: { machine?: string; provider?: string | null; toolName?: string },
): string | null {
	const machine = where.machine ? `machine "${where.machine}"` : "its machine";
	const capability = row?.responseCapability as
		| { type?: unknown; reason?: unknown }
		| undefined;
	if (capability?.type === "not_resumable") {
		const why =
			typeof capability.reason === "string" && capability.reason.length > 0
				? ` (${redact(capability.reason)})`
				: "";
		return `T3 can no longer deliver an answer to this request${why}. Nobody can answer it: stop the run with t3_interrupt and dispatch the work again, or continue the thread in T3 Code on ${machine}.`;
	}
	if (request.kind === "auth_refresh") {
		const provider = where.provider ? `"${where.provider}"` : "the thread's";
		return `The ${provider} provider must be signed in again on ${machine}: a person signs in there (T3 Code's provider settings, or the provider's own login on that host); the run then continues by itself.`;
	}
	if (request.kind === "dynamic_tool_call") {
		const tool = where.toolName ? ` "${redact(where.toolName)}"` : "";
		return `The agent called the client-side tool${tool}, which a T3 Code client answers, not t3code-mcp: a person opens the thread in T3 Code on ${machine} to let it run; the run continues once it is answered.`;
	}
	return null;
}
