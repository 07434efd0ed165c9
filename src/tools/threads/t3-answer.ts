/** `t3_answer`: answer the pending question or approval of a thread. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { DECISIONS, type Decision } from "../../t3/derive/request-kinds.ts";
import { answer } from "../../threads/control/answer.ts";
import { threadIdArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

/** Runtime request ids embed provider turn and call ids: longer than other ids. */
const REQUEST_ID_MAX = 1_000;

export const t3Answer = defineTool({
	name: "t3_answer",
	title: "Answer a T3 question or approval",
	description:
		'Answer what a run is waiting for, as reported by t3_wait (outcome "question"). For a question (kind user_input) pass answers: {question id: option label}, a list of labels for multi-select questions, or your own text where the question allows it; a question with required: false may be left out. For an approval (kind approval) pass one of its decisions (decision: "accept" or "decline" unless it lists others, such as "accept_for_session"); never approve without reading the warning T3 attached to a decision. A question with answerable: false (kinds auth_refresh and dynamic_tool, or a request T3 can no longer resume) cannot be answered here: its reason says what a person must do, where. To close a question without answering, pass dismiss: true (only where the question says dismissable: true; otherwise answer it or stop the run with t3_interrupt). Pass the question\'s request_id to be sure you answer that request and not a newer one. Returns status "sent" or "dismissed"; then call t3_wait again.',
	inputSchema: toolInput({
		thread_id: threadIdArg,
		answers: z
			.record(z.string(), z.union([z.string(), z.array(z.string())]))
			.optional()
			.describe(
				"For a question: {question id: option label | [labels] | free text}; questions with required: false may be omitted.",
			),
		decision: z
			.enum(DECISIONS as [Decision, ...Decision[]])
			.optional()
			.describe(
				"For an approval: one of the question's decisions (accept and decline unless T3 offers others); read each decision's warning first.",
			),
		request_id: z
			.string()
			.min(1)
			.max(REQUEST_ID_MAX)
			.optional()
			.describe(
				"The question's request_id from t3_wait; refused when that request is no longer pending.",
			),
		dismiss: z
			.boolean()
			.optional()
			.describe(
				"Close the pending question without answering (only when its dismissable is true).",
			),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		request_id: z.string(),
		status: z.enum(["sent", "dismissed"]),
		custom: z.array(z.string()),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: false,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler(args, ctx, { threadDeps }) {
		return ok(
			await answer(threadDeps, {
				...args,
				by: { client: ctx.client.name, via: ctx.via ?? "mcp" },
			}),
		);
	},
});
