/**
 * `t3_answer`: validates answers against the request that is really pending, then sends
 * `runtime-request.respond`. Labels are mapped to option values where the server gives them.
 * `dismiss` closes a message-mode question unanswered (`thread.user-input.dismiss`, §6.6).
 */

import { forgetAnswer, noteAnswer } from "../../approvals/answer-notes.ts";
import { checkThreadPath } from "../../rights/run-limits.ts";
import type { AuditVia } from "../../store/audit.ts";
import {
	pendingQuestion,
	questionOptionValue,
} from "../../t3/derive/derive.ts";
import { maskSecrets } from "../../util/redact.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { locateThread, readDetail, runtimeModeOf } from "../locate.ts";

export type AnswerValue = string | string[];

export interface AnswerArgs {
	thread_id: string;
	answers?: Record<string, AnswerValue>;
	/** One of the question's `decisions` (snake_case). */
	decision?: string;
	/** The request the caller means; refused as stale when it is no longer the pending one. */
	request_id?: string;
	dismiss?: boolean;
	/** Who sends it and how, for the events saying the request was answered (answer-notes.ts). */
	by?: { client: string; via: AuditVia };
}

/** Requests we already answered, so a second answer is refused clearly even before T3's shell catches up. */
const answered = new Set<string>();

export async function answer(deps: ThreadDeps, args: AnswerArgs) {
	const located = await locateThread(deps, args.thread_id);
	const { projection } = await readDetail(located, true);
	// The fresh projection is authoritative; the shell may lag a new or a resolved request.
	const question = pendingQuestion(projection, undefined, {
		machine: located.entry.config.name,
	});
	const live = question && !answered.has(question.request_id) ? question : null;
	if (args.request_id !== undefined && live?.request_id !== args.request_id) {
		throw new ThreadError(
			`request_id: request ${args.request_id} is no longer pending on thread "${args.thread_id}" (answered, dismissed, or its run ended)${live ? `; the pending one is ${live.request_id} (${live.prompt})` : ""}. Call t3_wait for the thread's current state.`,
		);
	}
	if (!question || answered.has(question.request_id)) {
		throw new ThreadError(
			question
				? `Request ${question.request_id} on thread "${args.thread_id}" was already answered. Call t3_wait to follow the run.`
				: `Nothing is pending on thread "${args.thread_id}": no question or approval waits for an answer. Call t3_wait to follow the run.`,
		);
	}
	if (!question.answerable) {
		throw new ThreadError(
			`Request ${question.request_id} on thread "${args.thread_id}" (${question.kind}) cannot be answered through t3code-mcp: ${question.reason}`,
		);
	}
	const offered = (question.decisions ?? []).map((d) => `"${d.decision}"`);
	const offeredText = `decision: ${orList(offered)}`;
	const command: Record<string, unknown> & { type: string; commandId: string } =
		{
			type: "runtime-request.respond",
			commandId: deps.newId(),
			threadId: args.thread_id,
			requestId: question.request_id,
		};
	const custom: string[] = [];

	if (args.dismiss === true) {
		if (args.answers !== undefined || args.decision !== undefined) {
			throw new ThreadError(
				"dismiss: pass either dismiss: true or answers/decision, not both.",
			);
		}
		if (!question.dismissable) {
			throw new ThreadError(
				`dismiss: T3 does not allow dismissing request ${question.request_id} on thread "${args.thread_id}" (the agent waits for a live ${question.kind === "approval" ? "decision" : "answer"}). Answer it with ${question.kind === "approval" ? offeredText : "answers"}, or stop the run with t3_interrupt.`,
			);
		}
		await sendNoted(deps, args, question.request_id, null, () =>
			located.entry.machine.dispatch({
				type: "thread.user-input.dismiss",
				commandId: deps.newId(),
				threadId: args.thread_id,
				requestId: question.request_id,
			}),
		);
		remember(question.request_id);
		return {
			thread_id: args.thread_id,
			request_id: question.request_id,
			status: "dismissed" as const,
			custom,
		};
	}

	if (question.kind === "approval") {
		if (args.answers !== undefined) {
			throw new ThreadError(
				`answers: the pending request is an approval ("${question.prompt}"); answer it with ${offeredText}, not answers.`,
			);
		}
		if (args.decision === undefined) {
			throw new ThreadError(
				`decision: required for the pending approval ("${question.prompt}"): ${orList(offered)}.`,
			);
		}
		const wire = question.decision_wire[args.decision];
		if (wire === undefined) {
			throw new ThreadError(
				`decision: "${args.decision}" is not offered for this approval ("${question.prompt}"). T3 offers: ${describeDecisions(question.decisions ?? [])}.`,
			);
		}
		command.decision = wire;
	} else {
		// Answers become the run's input: held to the thread's mode, like a follow-up.
		checkThreadPath(
			deps.client,
			"answer",
			args.thread_id,
			runtimeModeOf(located, projection),
		);
		if (args.decision !== undefined) {
			throw new ThreadError(
				`decision: the pending request is a question, not an approval; answer it with answers: {${question.questions.map((q) => `"${q.id}": <label>`).join(", ")}}.`,
			);
		}
		const given = args.answers ?? {};
		const ids = question.questions.map((q) => q.id);
		const describe = () =>
			question.questions
				.map(
					(q) =>
						`"${q.id}" (${q.text}; options: ${q.options.map((o) => `"${o}"`).join(", ")}${q.multi_select ? "; several allowed" : ""}${q.required ? "" : "; optional"})`,
				)
				.join("; ");
		for (const id of Object.keys(given)) {
			if (!ids.includes(id)) {
				throw new ThreadError(
					`answers: unknown question id "${id}". Questions: ${describe()}.`,
				);
			}
		}
		const missing = question.questions
			.filter((q) => q.required && given[q.id] === undefined)
			.map((q) => `"${q.id}"`);
		if (missing.length > 0) {
			throw new ThreadError(
				`answers: missing an answer for required question${missing.length === 1 ? "" : "s"} ${missing.join(", ")}. Questions: ${describe()}.`,
			);
		}
		const wire: Record<string, string | string[]> = {};
		for (const q of question.questions) {
			const value = given[q.id];
			// An optional question left unanswered is omitted, as T3's own clients do (§6.6).
			if (value === undefined) continue;
			if (Array.isArray(value) && !q.multi_select) {
				throw new ThreadError(
					`answers.${q.id}: this question takes one answer, not a list. Options: ${q.options.map((o) => `"${o}"`).join(", ")}.`,
				);
			}
			// Nothing chosen would reach the agent as an answer that says nothing, like blank text.
			if (Array.isArray(value) && value.length === 0) {
				throw new ThreadError(
					`answers.${q.id}: an empty list is not an answer. Give one or more of the options (${q.options.map((o) => `"${o}"`).join(", ")})${q.allow_custom ? " or non-empty free text" : ""}.`,
				);
			}
			const labels = Array.isArray(value) ? value : [value];
			const mapped = labels.map((label) => {
				// Blank text would reach the agent as an answer that says nothing.
				if (label.trim() === "" && !q.options.includes(label)) {
					throw new ThreadError(
						`answers.${q.id}: an empty answer is not an answer. Give ${q.options.length ? `one of the options (${q.options.map((o) => `"${o}"`).join(", ")})${q.allow_custom ? " or non-empty free text" : ""}` : "non-empty text"}.`,
					);
				}
				// The caller saw the options masked: a masked label names the option it shows.
				const option =
					q.options.find((o) => o === label) ??
					q.options.find((o) => maskSecrets(o) === label);
				if (option !== undefined)
					return questionOptionValue(
						projection,
						question.request_id,
						q.id,
						option,
					);
				if (!q.allow_custom) {
					throw new ThreadError(
						`answers.${q.id}: "${label}" is not an option and this question allows no free text. Options: ${q.options.map((o) => `"${o}"`).join(", ")}.`,
					);
				}
				if (!custom.includes(q.id)) custom.push(q.id);
				return label;
			});
			wire[q.id] = Array.isArray(value) ? mapped : (mapped[0] as string);
		}
		command.answers = wire;
	}

	await sendNoted(
		deps,
		args,
		question.request_id,
		question.kind === "approval" ? (args.decision ?? null) : null,
		() => located.entry.machine.dispatch(command),
	);
	remember(question.request_id);
	return {
		thread_id: args.thread_id,
		request_id: question.request_id,
		status: "sent" as "sent" | "dismissed",
		custom,
	};
}

/** Sends the answer with a note of who sent it, dropped again when the send fails. */
async function sendNoted(
	deps: ThreadDeps,
	args: AnswerArgs,
	requestId: string,
	decision: string | null,
	send: () => Promise<unknown>,
): Promise<void> {
	noteAnswer(args.thread_id, requestId, {
		decision,
		client: args.by?.client ?? deps.client?.name ?? null,
		via: args.by?.via ?? null,
	});
	try {
		await send();
	} catch (error) {
		forgetAnswer(args.thread_id, requestId);
		throw error;
	}
}

function remember(requestId: string): void {
	answered.add(requestId);
	// Only the recent ones matter (T3's own state catches up within moments); keep it bounded.
	if (answered.size > 1_000)
		answered.delete(answered.values().next().value as string);
}

/** The offered decisions with their labels and warnings, for an error the caller acts on. */
function describeDecisions(
	decisions: { decision: string; label: string; warning: string | null }[],
): string {
	return decisions
		.map(
			(d) =>
				`"${d.decision}" (${d.label}${d.warning ? `; warning: ${d.warning}` : ""})`,
		)
		.join(", ");
}

/** `"a" or "b"`, `"a", "b" or "c"`. */
function orList(items: string[]): string {
	return items.length <= 1
		? (items[0] ?? "")
		: `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}
