/** `t3_wait`: wait until a run settles or asks a question; a timeout is a normal result. */
import { z } from "zod";
import { ok, ToolFailure } from "../../mcp/result.ts";
import { waitForThreads } from "../../threads/wait.ts";
import { questionSchema, segmentIdArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

const MAX_WAIT_S = 3600;

export const t3Wait = defineTool({
	name: "t3_wait",
	title: "Wait for a T3 run",
	description:
		'Wait until the latest run you dispatched on a thread finishes (outcome completed, interrupted or failed, with the agent\'s final message or the error) or needs an answer (outcome question: answer it with t3_answer, then wait again). Returns at once if that already happened. With thread_ids it returns as soon as the first of them settles, naming it in thread_id. If the timeout passes first the outcome is "timeout" (timeout 0 just looks): the run keeps going, nothing is interrupted; simply call t3_wait again. A run in a queue held by t3_interrupt hold_queue returns "timeout" at once, saying so. A thread that vanished from its machine returns outcome "failed" with run_status "missing".',
	inputSchema: toolInput({
		thread_id: segmentIdArg()
			.optional()
			.describe("The thread to wait on. Pass this or thread_ids, not both."),
		thread_ids: z
			.array(segmentIdArg())
			.min(1)
			.max(50)
			.optional()
			.describe("Several threads: returns when the first one settles."),
		timeout: z
			.number()
			.min(0)
			.max(MAX_WAIT_S)
			.optional()
			.describe(
				`Seconds to wait at most (default set by the server, 600 unless configured; max ${MAX_WAIT_S}).`,
			),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		outcome: z.enum([
			"completed",
			"interrupted",
			"failed",
			"question",
			"timeout",
		]),
		run_id: z.string().nullable(),
		run_status: z.string().nullable(),
		message: z.string().nullable(),
		error: z.string().nullable(),
		question: questionSchema,
		elapsed_s: z.number(),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ thread_id, thread_ids, timeout }, ctx, { threadDeps }) {
		if ((thread_id === undefined) === (thread_ids === undefined)) {
			throw new ToolFailure(
				"Pass exactly one of thread_id (one thread) or thread_ids (several threads).",
			);
		}
		const ids = thread_ids ? [...new Set(thread_ids)] : [thread_id as string];
		const { note, ...result } = await waitForThreads(threadDeps, ids, {
			timeoutS: timeout ?? threadDeps.settings.waitTimeoutS,
			signal: ctx.signal,
			progress: ctx.progress,
		});
		return ok(
			result,
			note ??
				(result.outcome === "timeout"
					? "Timed out waiting; the run was not interrupted and keeps going. Call t3_wait again to keep waiting."
					: undefined),
		);
	},
});
