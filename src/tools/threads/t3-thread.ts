/** `t3_thread`: read one thread, its latest run and the last runs' messages, tools and files. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { readThread } from "../../threads/read.ts";
import {
	projectRefSchema,
	questionSchema,
	threadIdArg,
	toolInput,
} from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Thread = defineTool({
	name: "t3_thread",
	title: "Read a T3 thread",
	description:
		"Read a T3 thread on whichever machine has it: its status, provider session, latest run (status, times, error), the last `turns` runs with their messages, tool calls and changed files, and the pending question if any. Use it to see what a run did or to re-read a result; use t3_wait to wait for a run to finish. Long texts are shortened with a visible …[truncated] marker.",
	inputSchema: toolInput({
		thread_id: threadIdArg,
		turns: z
			.number()
			.int()
			.min(1)
			.max(20)
			.optional()
			.describe("How many of the latest runs to include, 1-20 (default 1)."),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		machine: z.string(),
		project: projectRefSchema,
		title: z.string(),
		status: z.string(),
		session: z.object({
			provider: z.string().nullable(),
			model: z.string().nullable(),
			status: z.string().nullable(),
		}),
		latest_run: z
			.object({
				id: z.string(),
				ordinal: z.number(),
				status: z.string(),
				requested_at: z.string().nullable(),
				started_at: z.string().nullable(),
				completed_at: z.string().nullable(),
				error: z.string().nullable(),
			})
			.nullable(),
		runs: z.array(
			z.object({
				id: z.string(),
				ordinal: z.number(),
				status: z.string(),
				messages: z.array(z.object({ role: z.string(), text: z.string() })),
				tools: z.array(
					z.object({
						kind: z.string(),
						title: z.string().nullable(),
						status: z.string().nullable(),
						exit_code: z.number().nullable(),
					}),
				),
				files: z.array(z.object({ path: z.string(), change: z.string() })),
			}),
		),
		question: questionSchema,
		watched: z.boolean(),
		origin: z.string().nullable(),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ thread_id, turns }, ctx, { threadDeps }) {
		return ok(
			await readThread(threadDeps, thread_id, turns ?? 1, ctx.readAhead),
		);
	},
});
