/** `t3_delete`: remove a thread for good. Its own tool so clients can gate it as destructive. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { deleteThread } from "../../threads/control/delete.ts";
import { idempotencyKeyArg, threadIdArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Delete = defineTool({
	name: "t3_delete",
	title: "Delete a T3 thread",
	description:
		"Permanently delete a thread and its history on its T3 machine. It leaves every list (t3_threads, t3_watch) and no further event is sent for it. This cannot be undone: to only put a thread away, use t3_manage with action archive.",
	inputSchema: toolInput({
		thread_id: threadIdArg,
		idempotency_key: idempotencyKeyArg,
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		deleted: z.literal(true),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ thread_id, idempotency_key }, _ctx, { threadDeps }) {
		return ok(await deleteThread(threadDeps, thread_id, idempotency_key));
	},
});
