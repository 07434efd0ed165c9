/** `t3_answer`: answer the pending question or approval of a thread. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { answer } from "../../threads/answer.ts";
import { threadIdArg } from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Answer = defineTool({
	name: "t3_answer",
	title: "Answer a T3 question or approval",
	description:
		'Answer what a run is waiting for, as reported by t3_wait (outcome "question"). For a question (kind user_input) pass answers: {question id: option label}, a list of labels for multi-select questions, or your own text where the question allows it. For an approval (kind approval) pass decision: "accept" or "decline". Then call t3_wait again.',
	inputSchema: z.object({
		thread_id: threadIdArg,
		answers: z
			.record(z.string(), z.union([z.string(), z.array(z.string())]))
			.optional()
			.describe(
				"For a question: {question id: option label | [labels] | free text}.",
			),
		decision: z
			.enum(["accept", "decline"])
			.optional()
			.describe("For an approval: accept or decline."),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		request_id: z.string(),
		status: z.literal("sent"),
		custom: z.array(z.string()),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: false,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler(args, _ctx, { threadDeps }) {
		return ok(await answer(threadDeps, args));
	},
});
