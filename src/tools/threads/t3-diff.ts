/** `t3_diff`: the unified diff of what a run, or a whole thread, changed in the workspace. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { readDiff } from "../../threads/read/diff.ts";
import { segmentIdArg, threadIdArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Diff = defineTool({
	name: "t3_diff",
	title: "Read what a T3 run changed",
	description:
		"Review delegated work: the files a run changed (default the thread's latest run) or, with whole_thread: true, everything the thread changed since it started, as a per-file summary (additions, deletions) plus the unified diff, one page of at most 60 000 bytes at a time. When truncated is true, call again with next_cursor (same thread_id, run_id, whole_thread) for the next page. When T3 has no diff (the run was interrupted or failed, is still going, or has no checkpoint) the result says available: false and why; that is not an error.",
	inputSchema: toolInput({
		thread_id: threadIdArg,
		run_id: segmentIdArg()
			.optional()
			.describe(
				"A run of the thread (run_id from t3_dispatch, t3_wait or t3_thread); default the latest run.",
			),
		whole_thread: z
			.boolean()
			.optional()
			.describe(
				"true: the whole thread's changes from its start (up to run_id when given).",
			),
		cursor: z
			.string()
			.min(1)
			.max(2_000)
			.optional()
			.describe("The next_cursor of the previous page."),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		run_id: z.string().nullable(),
		available: z.boolean(),
		reason: z.string().nullable(),
		files: z.array(
			z.object({
				path: z.string(),
				additions: z.number().int(),
				deletions: z.number().int(),
			}),
		),
		diff: z.string(),
		truncated: z.boolean(),
		next_cursor: z.string().nullable(),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler(args, _ctx, { threadDeps }) {
		const result = await readDiff(threadDeps, {
			threadId: args.thread_id,
			runId: args.run_id,
			wholeThread: args.whole_thread,
			cursor: args.cursor,
		});
		return ok({ ...result });
	},
});
