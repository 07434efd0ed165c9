/** `t3_manage`: rename, archive, settle, stop the session or control the queue of a thread. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { MANAGE_ACTIONS, manageThread } from "../../threads/control/manage.ts";
import { PROMPT_LIMIT } from "../../threads/dispatch/dispatch.ts";
import {
	ID_MAX,
	idempotencyKeyArg,
	segmentIdArg,
	threadIdArg,
	titleArg,
	toolInput,
} from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Manage = defineTool({
	name: "t3_manage",
	title: "Organise a T3 thread",
	description:
		'Change how a thread is kept (nothing is lost but a cancelled follow-up): "rename" (with title), "archive" / "unarchive" (archived threads leave the active list; see t3_threads archived: true), "settle" / "unsettle" (mark it done or open again), "stop_session" (detach the agent\'s provider session to free it; history stays, the next t3_dispatch starts a new one), "resume_queue" (start follow-ups held by t3_interrupt hold_queue), "cancel_queued" (with run_id: drop a queued follow-up that has not started; t3_thread queued lists them) / "edit_queued" (with run_id and prompt: replace its message before it runs) — a run that already started cannot be changed: stop it with t3_interrupt or add to it with t3_dispatch mode "steer", "retry_preparation" (prepare again the worktree of a run that failed with error_class workspace_preparation, e.g. after creating its base_ref, and run it; run_id default the latest such run). Returns the thread\'s status, title and whether it is archived, and changed: false with a note when there was nothing to do (unarchive on a thread that is not archived, resume_queue with nothing held…). T3 refuses some actions until something else happens first (archive while the agent works, settle while a question is pending): the error says what to do. To remove a thread for good use t3_delete.',
	inputSchema: toolInput({
		thread_id: threadIdArg,
		action: z
			.enum(MANAGE_ACTIONS)
			.describe(
				"rename | archive | unarchive | settle | unsettle | stop_session | resume_queue | retry_preparation | cancel_queued | edit_queued",
			),
		title: titleArg(ID_MAX)
			.min(1)
			.optional()
			.describe('The new title; only with action "rename".'),
		run_id: segmentIdArg()
			.optional()
			.describe(
				'With "cancel_queued" / "edit_queued" (required): the queued run (t3_thread queued[].run_id). With "retry_preparation": the failed run (t3_thread runs[].id); default the latest run that failed preparing.',
			),
		// Counted in code points like t3_dispatch's prompt, so only advertised here.
		prompt: z
			.string()
			.meta({ maxLength: PROMPT_LIMIT })
			.optional()
			.describe(
				'Only with "edit_queued" (required there): the queued run\'s new message.',
			),
		idempotency_key: idempotencyKeyArg,
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		action: z.enum(MANAGE_ACTIONS),
		status: z.string(),
		title: z.string(),
		archived: z.boolean(),
		changed: z
			.boolean()
			.describe("false when there was nothing to do (note says why)."),
		note: z.string().nullable(),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: false,
		idempotentHint: false,
		openWorldHint: true,
	},
	async handler(
		{ thread_id, action, title, run_id, prompt, idempotency_key },
		_ctx,
		{ threadDeps },
	) {
		const result = await manageThread(
			threadDeps,
			thread_id,
			action,
			title,
			idempotency_key,
			run_id,
			prompt,
		);
		return ok({ ...result });
	},
});
