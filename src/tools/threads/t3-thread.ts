/** `t3_thread`: read one thread, its latest run and the last runs' messages, tools and files. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { readThread } from "../../threads/read/read.ts";
import {
	failureFields,
	heldProjectRefSchema,
	heldSchema,
	ID_MAX,
	questionSchema,
	threadIdArg,
	toolInput,
} from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Thread = defineTool({
	name: "t3_thread",
	title: "Read a T3 thread",
	description:
		"Read a T3 thread on whichever machine has it (or a dispatch the server still holds: status held, with `held` saying where it stands): its status, provider session, latest run (status, times, error and error_class), the last `turns` runs with their messages, tool calls, T3's notices and changed files, the follow-ups still queued (queued, with their text), and the pending question if any. A fork also shows forked_from and the source conversation it inherited. Use it to see what a run did or to re-read a result; use t3_wait to wait for a run to finish. To see why a command failed, pass its item_id (from runs[].tools[]) to get its whole output as `item`. Long texts are shortened with a visible …[truncated] marker.",
	inputSchema: toolInput({
		thread_id: threadIdArg,
		turns: z
			.number()
			.int()
			.min(1)
			.max(20)
			.optional()
			.describe("How many of the latest runs to include, 1-20 (default 1)."),
		item_id: z
			.string()
			.min(1)
			.max(ID_MAX)
			.optional()
			.describe(
				"A tool call's item_id from runs[].tools[]: also returns its whole output as `item` (T3 0.1.x does not send it with the thread).",
			),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		machine: z
			.string()
			.nullable()
			.describe("null while a dispatch for a machine pattern is held."),
		project: heldProjectRefSchema,
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
				...failureFields,
			})
			.nullable(),
		runs: z.array(
			z.object({
				id: z.string(),
				ordinal: z.number(),
				status: z.string(),
				...failureFields,
				messages: z.array(
					z.object({
						role: z.string(),
						text: z.string(),
						attachments: z
							.array(
								z.object({
									name: z.string(),
									mime_type: z.string(),
									size: z.number().describe("Bytes."),
								}),
							)
							.describe(
								"Files sent with the message (t3_dispatch attachments); their bytes are not shown.",
							),
					}),
				),
				tools: z.array(
					z.object({
						item_id: z
							.string()
							.describe("Pass it as item_id to read the whole output."),
						kind: z.string(),
						title: z.string().nullable(),
						status: z.string().nullable(),
						exit_code: z.number().nullable(),
						output_omitted: z
							.boolean()
							.describe(
								"T3 did not send the output with the thread: read it with item_id.",
							),
						failed: z.boolean().describe("T3 says the output shows a failure."),
					}),
				),
				notices: z.array(
					z.object({
						kind: z.enum(["notification", "system_notice"]),
						text: z.string(),
					}),
				),
				files: z.array(z.object({ path: z.string(), change: z.string() })),
			}),
		),
		queued: z
			.array(
				z.object({
					run_id: z.string(),
					text: z.string().describe("The follow-up's message."),
					held: z
						.boolean()
						.describe(
							'The queue is held (after t3_interrupt hold_queue or a server restart): t3_manage "resume_queue" starts it.',
						),
				}),
			)
			.describe(
				'Follow-ups queued behind the current run, in the order they will run; change them with t3_manage "edit_queued" / "cancel_queued".',
			),
		question: questionSchema,
		item: z
			.object({
				item_id: z.string(),
				kind: z.string(),
				title: z.string(),
				status: z.string(),
				exit_code: z.number().nullable(),
				output: z.string().nullable(),
				truncated: z.boolean(),
			})
			.nullable()
			.describe(
				"The item asked for with item_id, with its whole output; else null.",
			),
		branch: z
			.string()
			.nullable()
			.describe("The thread's git branch as T3 reports it (null: not said)."),
		worktree_path: z
			.string()
			.nullable()
			.describe(
				"The git worktree the thread works in; null for the project's root checkout (or until T3 has prepared it).",
			),
		branch_temporary: z
			.boolean()
			.describe(
				"The branch is T3's temporary t3code/<8 hex> name: T3 renames it once, after the thread's launch, where it can.",
			),
		forked_from: z
			.object({
				thread_id: z.string(),
				run_id: z
					.string()
					.nullable()
					.describe(
						"The source's run the fork continues from (null: T3 did not say).",
					),
			})
			.nullable()
			.describe(
				"The thread this one was forked from (t3_dispatch fork_of), else null.",
			),
		inherited: z
			.object({
				messages: z.array(z.object({ role: z.string(), text: z.string() })),
			})
			.nullable()
			.describe(
				"A fork's conversation from its source up to the fork point (T3 keeps it out of runs): the messages of its last `turns` runs, texts shortened like runs' messages. Null when not a fork.",
			),
		pull_requests: z
			.array(
				z.object({
					number: z.number().int().nullable(),
					url: z.string().nullable(),
					state: z.string().nullable(),
					title: z.string().nullable(),
				}),
			)
			.describe("Pull requests T3 has linked to the thread."),
		snoozed_until: z.string().nullable(),
		pinned: z
			.boolean()
			.describe(
				"Whether T3 shows the thread pinned (t3_manage pin / unpin); false on a T3 without pins.",
			),
		background_tasks: z
			.number()
			.int()
			.describe("Background work T3 reports still running for the thread."),
		watched: z.boolean(),
		origin: z.string().nullable(),
		app_url: z
			.string()
			.describe(
				"T3's own link to this thread (t3-thread://v1/<id>): a person opens it in T3's app.",
			),
		client: z
			.string()
			.nullable()
			.describe(
				"The client whose dispatch last ran on this thread (its [clients.<name>]); null when none of ours did.",
			),
		held: heldSchema
			.nullable()
			.describe(
				'A dispatch the server holds until a machine has room (status "held"): position, reason, detail, since, not_before; null for a thread that started.',
			),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ thread_id, turns, item_id }, ctx, { threadDeps }) {
		return ok(
			await readThread(
				threadDeps,
				thread_id,
				turns ?? 1,
				ctx.readAhead,
				item_id,
			),
		);
	},
});
