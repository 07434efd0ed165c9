/** `t3_threads`: find threads across machines, newest first, filtered and paged. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import {
	DEFAULT_LIMIT,
	LIST_STATES,
	listWithHeld,
	MAX_LIMIT,
} from "../../threads/read/list.ts";
import {
	failureFields,
	heldProjectRefSchema,
	heldSchema,
	ID_MAX,
	PATH_MAX,
	toolInput,
} from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Threads = defineTool({
	name: "t3_threads",
	title: "Find T3 threads",
	description:
		"List existing threads on every machine (or one machine / project), newest first: title, status, state (attention = a question/approval is pending, a provider must be signed in again, or the latest run failed; active = a run is going or queued, or waits for a T3 client to answer a tool call; settled = nothing to do; held = a dispatch the server holds until a machine has room, listed first), pending request (question, approval, auth_refresh, dynamic_tool), latest run, watched. Filter by state or by text (query): it matches the title or latest message, and, where the machine supports it (T3's message search), any message of the thread: such rows carry match {role, snippet}. Pass archived: true for archived threads. Machines that are not online are listed under `unavailable`. Use it to pick up earlier work: then t3_thread for details, t3_answer for a pending question, t3_dispatch with thread_id to continue. When next_cursor is not null, call again with the same filters and cursor for the next page.",
	inputSchema: toolInput({
		machine: z
			.string()
			.min(1)
			.max(ID_MAX)
			.optional()
			.describe(
				"Only this machine (a name from t3_machines); it must be online. Default: every machine.",
			),
		project: z
			.string()
			.min(1)
			.max(PATH_MAX)
			.optional()
			.describe("Only this project: its id, title or workspace path."),
		state: z
			.enum(LIST_STATES)
			.optional()
			.describe(
				'"attention", "active", "settled", "held" or "all" (default): see the description for their meaning. "held": dispatches the server holds until a machine has room (listed first on the first page of "all" too); a machine filter matches only those held for that machine by name.',
			),
		query: z
			.string()
			.min(1)
			.max(500)
			.optional()
			.describe(
				"Text to find in the thread's title or latest message (case-insensitive), and in every message where the machine supports it: 2–200 characters after trimming, as T3's search takes it.",
			),
		archived: z
			.boolean()
			.optional()
			.describe("true: list archived threads instead of active ones."),
		limit: z
			.number()
			.int()
			.min(1)
			.max(MAX_LIMIT)
			.optional()
			.describe(
				`Threads per page (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`,
			),
		cursor: z
			.string()
			.min(1)
			.max(2_000)
			.optional()
			.describe(
				"The next_cursor of the previous page; valid only with the same filters.",
			),
	}),
	outputSchema: z.object({
		threads: z.array(
			z.object({
				thread_id: z.string(),
				machine: z
					.string()
					.nullable()
					.describe("null for a dispatch held for a machine pattern."),
				project: heldProjectRefSchema,
				title: z.string(),
				status: z.string(),
				state: z.enum(["attention", "active", "settled", "held"]),
				pending: z
					.enum(["question", "approval", "auth_refresh", "dynamic_tool"])
					.nullable(),
				latest_run: z
					.object({
						id: z.string(),
						ordinal: z.number().int().nullable(),
						status: z.string(),
					})
					.nullable(),
				...failureFields,
				branch: z.string().nullable(),
				worktree_path: z
					.string()
					.nullable()
					.describe("null: the project's root checkout."),
				snoozed_until: z.string().nullable(),
				pinned: z.boolean(),
				background_tasks: z.number().int(),
				updated_at: z.string().nullable(),
				archived: z.boolean(),
				watched: z.boolean(),
				origin: z.string().nullable(),
				client: z.string().nullable(),
				app_url: z.string(),
				match: z
					.object({
						role: z.string().describe('"user" or "assistant".'),
						snippet: z.string(),
					})
					.nullable()
					.describe(
						"The message text T3's search found the query in; null when the title or latest message matched.",
					),
				held: heldSchema
					.nullable()
					.describe(
						"A held dispatch: where it stands (position, reason, detail, since, not_before); null for a thread.",
					),
			}),
		),
		next_cursor: z.string().nullable(),
		unavailable: z.array(
			z.object({
				machine: z.string(),
				state: z.string(),
				reason: z.string().nullable(),
			}),
		),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler(args, _ctx, { threadDeps }) {
		return ok(await listWithHeld(threadDeps, args));
	},
});
