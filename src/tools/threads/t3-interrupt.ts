/** `t3_interrupt`: ask T3 to stop a thread's active run. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { interrupt } from "../../threads/control/interrupt.ts";
import { threadIdArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Interrupt = defineTool({
	name: "t3_interrupt",
	title: "Interrupt a T3 run",
	description:
		'Ask T3 to interrupt the active run of a thread. Follow-ups queued behind it then start in order, unless hold_queue is true: then they wait until t3_manage with action "resume_queue". Returns the run interrupted, its status as T3 reports it right after the request (the run may take a moment to stop: call t3_wait for the final outcome), and the queued runs with whether they are held. When the run has ended but its background work is still going, stops that work as the Stop button in T3 does. If nothing is running (a run waiting on its next turn is not running), says so with interrupted: false.',
	inputSchema: toolInput({
		thread_id: threadIdArg,
		hold_queue: z
			.boolean()
			.optional()
			.describe(
				'Keep runs queued behind the interrupted one from starting until t3_manage action "resume_queue" (default false: they start in order).',
			),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		run_id: z.string().nullable(),
		run_status: z.string(),
		queued: z.array(z.object({ run_id: z.string(), held: z.boolean() })),
		interrupted: z
			.boolean()
			.describe("false when nothing was running (nothing was sent to T3)."),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ thread_id, hold_queue }, _ctx, { threadDeps }) {
		const { result, note } = await interrupt(
			threadDeps,
			thread_id,
			hold_queue ?? false,
		);
		return ok(result, note);
	},
});
