/**
 * `t3_wait`: wait until a run settles or asks a question; a timeout is a normal result. A client
 * that declares the Tasks extension gets a task instead of a blocking call (src/tasks).
 */
import { z } from "zod";
import { ToolFailure } from "../../mcp/result.ts";
import { waitForThreads } from "../../threads/wait/wait.ts";
import {
	failureFields,
	questionSchema,
	segmentIdArg,
	toolInput,
} from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { settledAtOnce, waitToolResult } from "./wait-results.ts";

const MAX_WAIT_S = 3600;

/** What a wait returns (also inside `t3_dispatch`'s result as `wait`). */
export const waitOutputSchema = z.object({
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
	...failureFields,
	elapsed_s: z.number(),
	/** On a timeout while the thread's machine is not online: its state and why. */
	machine_state: z.string().optional(),
	reason: z.string().nullable().optional(),
});

export const t3Wait = defineTool({
	name: "t3_wait",
	title: "Wait for a T3 run",
	description:
		'Wait until the latest run you dispatched on a thread finishes (outcome completed, interrupted or failed, with the agent\'s final message or the error) or needs an answer (outcome question: answer it with t3_answer, then wait again). Returns at once if that already happened. With thread_ids it returns as soon as the first of them settles, naming it in thread_id. If the timeout passes first the outcome is "timeout" (timeout 0 just looks): the run keeps going, nothing is interrupted; simply call t3_wait again. A failed run says why in error_class (usage_limit with reset_at and auto_resume when T3 resumes it by itself). A run in a held queue (t3_interrupt hold_queue, or a T3 restart) returns "timeout" at once, saying so. A thread that vanished from its machine returns outcome "failed" with run_status "missing". A client with MCP Tasks gets a task at once instead of a blocking call, completed with this same result (no server wait timeout then; an explicit timeout still applies). To dispatch and wait in one call, use t3_dispatch with wait: true.',
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
	outputSchema: waitOutputSchema,
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
		if (ctx.tasks && timeout !== 0) {
			// A task unless the outcome is already there: then the plain result, as without tasks.
			const first = await waitForThreads(threadDeps, ids, {
				timeoutS: 0,
				signal: ctx.signal,
			});
			if (settledAtOnce(first)) return waitToolResult(first);
			return ctx.tasks.create({
				tool: "t3_wait",
				threadIds: ids,
				...(timeout === undefined ? {} : { timeoutS: timeout }),
			});
		}
		return waitToolResult(
			await waitForThreads(threadDeps, ids, {
				timeoutS: timeout ?? threadDeps.settings.waitTimeoutS,
				signal: ctx.signal,
				progress: ctx.progress,
			}),
		);
	},
});
