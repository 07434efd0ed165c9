/**
 * What a person may do from the console, each as the session's client is configured now and
 * through its scoped services, refused exactly as the same MCP call would be (`refusal`), and
 * audited with `via: "console"`: approve or decline (approvers only), answer a question (above
 * read-only), interrupt a run, replay the dead events (full-access).
 */
import type { ClientConfig } from "../config/types.ts";
import { servicesForClient } from "../rights/for-client.ts";
import { RightsError } from "../rights/refusal.ts";
import { auditRow, refusal } from "../rights/tool-rights.ts";
import type { Services } from "../services.ts";
import { placelessRow } from "../store/audit.ts";
import { T3Error } from "../t3/machine-api.ts";
import { type AnswerValue, answer } from "../threads/control/answer.ts";
import { interrupt } from "../threads/control/interrupt.ts";
import { ThreadError } from "../threads/errors.ts";
import { maskCredentials } from "../util/redact.ts";
import type { Notice } from "./notices.ts";
import { isOperator } from "./overview.ts";

export interface ActionOutcome {
	/** Refused for the client's rights: answered 403. */
	refused: boolean;
	notice: Notice;
}

/** A failure in words a person can act on (T3's text masked). */
export function actionFailure(error: unknown): string {
	if (
		error instanceof ThreadError ||
		error instanceof T3Error ||
		error instanceof RightsError
	)
		return maskCredentials(error.message);
	return "The action failed unexpectedly; the server log has the details.";
}

/** The answers of a question form: `q:<id>` (chosen options) and `text:<id>` (typed). */
function answersOf(form: URLSearchParams): Record<string, AnswerValue> {
	const answers: Record<string, AnswerValue> = {};
	const ids = new Set<string>();
	for (const key of form.keys())
		if (key.startsWith("q:") || key.startsWith("text:"))
			ids.add(key.slice(key.indexOf(":") + 1));
	for (const id of ids) {
		const chosen = form.getAll(`q:${id}`).filter((v) => v !== "");
		const typed = form.get(`text:${id}`)?.trim() ?? "";
		const values = typed === "" ? chosen : [...chosen, typed];
		if (values.length === 1) answers[id] = values[0] as string;
		else if (values.length > 1) answers[id] = values;
	}
	return answers;
}

export function consoleActions(services: Services, now: () => number) {
	/** Runs one tool-like action with the rights check and the audit row of the MCP path. */
	const act = async (
		client: ClientConfig,
		tool: "t3_answer" | "t3_interrupt",
		args: Record<string, unknown>,
		run: (scoped: Services) => Promise<Record<string, unknown>>,
		done: string,
	): Promise<ActionOutcome> => {
		const scoped = servicesForClient(services, client);
		const located = scoped.fleet.locate(String(args.thread_id));
		const where = {
			...args,
			...(located ? { machine: located.entry.config.name } : {}),
		};
		const started = performance.now();
		const record = (outcome: Parameters<typeof auditRow>[3]) => {
			const row = auditRow(client, tool, where, outcome, now(), "console");
			services.audit.record(row);
			services.metrics.toolCall(client.name, tool, row.result);
			// One line per action, as per tool call: never answers or tokens.
			services.log.info("console action", {
				client: client.name,
				tool,
				machine: row.machine,
				thread: row.thread_id,
				result: row.result,
				ms: Math.round(performance.now() - started),
			});
		};
		const refused = refusal(client, tool, args);
		if (refused) {
			record({ code: refused.code });
			return {
				refused: true,
				notice: { tone: "error", text: refused.message },
			};
		}
		try {
			const data = await run(scoped);
			const structured = located
				? { ...data, project: { id: located.project.id } }
				: data;
			record({ result: { content: [], structuredContent: structured } });
			return { refused: false, notice: { tone: "ok", text: done } };
		} catch (error) {
			const code = error instanceof RightsError ? error.code : "error";
			record({ code });
			if (!(error instanceof ThreadError || error instanceof T3Error))
				services.log.error("console action failed", { tool, error });
			return {
				refused: false,
				notice: { tone: "error", text: actionFailure(error) },
			};
		}
	};

	const by = (client: ClientConfig) => ({
		client: client.name,
		via: "console" as const,
	});

	/** `t3_answer` from a form: a decision or answers, for the form's request if it names one. */
	const answerAs = (
		client: ClientConfig,
		threadId: string,
		form: URLSearchParams,
		what: { decision: string } | { answers: Record<string, AnswerValue> },
		done: string,
	) => {
		const requestId = form.get("request_id") ?? undefined;
		const args = {
			thread_id: threadId,
			...what,
			...(requestId ? { request_id: requestId } : {}),
		};
		return act(
			client,
			"t3_answer",
			args,
			async (scoped) => answer(scoped.threadDeps, { ...args, by: by(client) }),
			done,
		);
	};

	return {
		decide(client: ClientConfig, threadId: string, form: URLSearchParams) {
			const decision = form.get("decision") ?? "";
			return answerAs(
				client,
				threadId,
				form,
				{ decision },
				`Sent: ${decision}.`,
			);
		},
		answer(client: ClientConfig, threadId: string, form: URLSearchParams) {
			return answerAs(
				client,
				threadId,
				form,
				{ answers: answersOf(form) },
				"Answer sent.",
			);
		},
		interrupt(client: ClientConfig, threadId: string, _form: URLSearchParams) {
			return act(
				client,
				"t3_interrupt",
				{ thread_id: threadId },
				async (scoped) => (await interrupt(scoped.threadDeps, threadId)).result,
				"Interrupt sent.",
			);
		},
		replay(client: ClientConfig): ActionOutcome {
			const row = (result: string) =>
				services.audit.record(
					placelessRow(now(), client.name, "outbox_replay", result, "console"),
				);
			if (!isOperator(client)) {
				row("capability_denied");
				return {
					refused: true,
					notice: {
						tone: "error",
						text: `Replaying dead events needs a full-access client; client "${client.name}" has access ${client.access}.`,
					},
				};
			}
			const replayed = services.events.replayDead();
			row("ok");
			return {
				refused: false,
				notice: {
					tone: "ok",
					text: `${replayed} dead event${replayed === 1 ? "" : "s"} put back in line.`,
				},
			};
		},
	};
}
