/** `t3_watch`: list tracked threads, or turn a thread's webhook events on or off. */
import { z } from "zod";
import { ok, ToolFailure } from "../../mcp/result.ts";
import { listTracked, setWatch } from "../../threads/wait/watch.ts";
import { segmentIdArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

const tracked = z.object({
	thread_id: z.string(),
	machine: z.string(),
	title: z.string(),
	status: z.string().nullable(),
	origin: z.string().nullable(),
});

export const t3Watch = defineTool({
	name: "t3_watch",
	title: "Watch T3 threads",
	description:
		"Without arguments: list the threads this server tracks, split into watched (their run outcomes and questions are sent as webhook events to your conversation) and unwatched. With thread_id and enabled: turn events for that thread on or off; watching a thread started elsewhere routes its future events to this conversation.",
	inputSchema: toolInput({
		thread_id: segmentIdArg()
			.optional()
			.describe("The thread to change; pass together with enabled."),
		enabled: z
			.boolean()
			.optional()
			.describe("true to send this thread's events, false to stop them."),
	}),
	// One object schema for both forms (MCP wants an object): a list has watched/unwatched arrays,
	// a change has thread_id and a boolean watched.
	outputSchema: z.object({
		thread_id: z.string().optional(),
		watched: z.union([z.array(tracked), z.boolean()]),
		unwatched: z.array(tracked).optional(),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: false,
		idempotentHint: true,
		openWorldHint: false,
	},
	async handler({ thread_id, enabled }, ctx, services) {
		if (thread_id === undefined && enabled === undefined)
			return ok(listTracked(services.threadDeps));
		if (thread_id === undefined || enabled === undefined) {
			throw new ToolFailure(
				"Pass both thread_id and enabled to change a thread, or neither to list the tracked threads.",
			);
		}
		const result = await setWatch(
			services.threadDeps,
			thread_id,
			enabled,
			ctx.origin,
			(id) => services.events.tracker.check(id),
		);
		return ok(result);
	},
});
