/** `t3_interrupt`: ask T3 to stop a thread's active run. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { interrupt } from "../../threads/interrupt.ts";
import { threadIdArg } from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Interrupt = defineTool({
	name: "t3_interrupt",
	title: "Interrupt a T3 run",
	description:
		"Ask T3 to interrupt the active run of a thread (queued follow-ups stay queued). Returns the run's status as T3 reports it right after the request; the run may take a moment to stop, so call t3_wait to see the final outcome. If nothing is running, says so.",
	inputSchema: z.object({ thread_id: threadIdArg }),
	outputSchema: z.object({
		thread_id: z.string(),
		run_id: z.string().nullable(),
		run_status: z.string(),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ thread_id }, _ctx, { threadDeps }) {
		const { result, note } = await interrupt(threadDeps, thread_id);
		return ok(result, note);
	},
});
