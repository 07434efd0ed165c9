/** `t3_manage`: rename, archive, settle, pin, snooze, stop the session or control the queue of a thread. */
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
		'Change how a thread is kept (nothing is lost but a cancelled follow-up): "rename" (with title), "archive" / "unarchive" (archived threads leave the active list; see t3_threads archived: true), "settle" / "unsettle" (mark it done or open again), "stop_session" (detach the agent\'s provider session to free it; history stays, the next t3_dispatch starts a new one), "resume_queue" (start follow-ups held by t3_interrupt hold_queue), "cancel_queued" (with run_id: drop a queued follow-up that has not started; t3_thread queued lists them) / "edit_queued" (with run_id and prompt: replace its message before it runs) — a run that already started cannot be changed: stop it with t3_interrupt or add to it with t3_dispatch mode "steer", "reorder_queued" (with run_id and before_run_id: move a queued follow-up before another queued one; before_run_id null or absent: last), "promote_queued" (with run_id: the queued message joins the running run now, as a steer, instead of waiting for its turn), "pin" / "unpin" (keep the thread on top of T3\'s list for the person), "snooze" (with until, an ISO time in the future: hide it until then) / "unsnooze", "mark_unread" (show it unread in T3 again), "retry_preparation" (prepare again the worktree of a run that failed with error_class workspace_preparation, e.g. after creating its base_ref, and run it; run_id default the latest such run). Returns the thread\'s status, title, whether it is archived and pinned, and changed: false with a note when there was nothing to do (unarchive on a thread that is not archived, resume_queue with nothing held…). T3 refuses some actions until something else happens first (archive while the agent works, settle while a question is pending): the error says what to do. To remove a thread for good use t3_delete.',
	inputSchema: toolInput({
		thread_id: threadIdArg,
		action: z
			.enum(MANAGE_ACTIONS)
			.describe(
				"rename | archive | unarchive | settle | unsettle | stop_session | resume_queue | retry_preparation | cancel_queued | edit_queued | reorder_queued | promote_queued | pin | unpin | snooze | unsnooze | mark_unread",
			),
		title: titleArg(ID_MAX)
			.min(1)
			.optional()
			.describe('The new title; only with action "rename".'),
		run_id: segmentIdArg()
			.optional()
			.describe(
				'With "cancel_queued" / "edit_queued" / "reorder_queued" / "promote_queued" (required): the queued run (t3_thread queued[].run_id). With "retry_preparation": the failed run (t3_thread runs[].id); default the latest run that failed preparing.',
			),
		before_run_id: segmentIdArg()
			.nullable()
			.optional()
			.describe(
				'Only with "reorder_queued": the queued run to move run_id before (t3_thread queued[].run_id); null or absent: to the end of the queue.',
			),
		until: z
			.string()
			.max(64)
			.optional()
			.describe(
				'Only with "snooze" (required there): until when, an ISO time in the future, e.g. "2030-01-02T09:00:00Z".',
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
		pinned: z
			.boolean()
			.describe(
				"Whether T3 shows the thread pinned (false on a T3 without pins).",
			),
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
		{
			thread_id,
			action,
			title,
			run_id,
			prompt,
			before_run_id,
			until,
			idempotency_key,
		},
		_ctx,
		{ threadDeps },
	) {
		const result = await manageThread(threadDeps, thread_id, action, {
			title,
			key: idempotency_key,
			runId: run_id,
			prompt,
			beforeRunId: before_run_id,
			until,
		});
		return ok({ ...result });
	},
});
