/**
 * The commands that close a pending runtime request (PROTOCOL.md §6.6): answering it
 * (`runtime-request.respond`, an approval decision or question answers) or dismissing a
 * question unanswered (`thread.user-input.dismiss`); the waiting run then goes on.
 */
import { respondRefusal } from "../../agent/request-kinds.ts";
import { type RunHandle, resolveRequest } from "../../runs/run-lifecycle.ts";
import type { CommandHandler, EngineCore } from "../engine-core.ts";
import { dismissRequest } from "../request-dismiss.ts";
import type { Row } from "../rows.ts";
import type { ThreadState } from "../store.ts";

/** The live run a request belongs to, found through its node. */
function requestHandle(
	core: EngineCore,
	thread: ThreadState,
	request: Row,
): RunHandle | undefined {
	const node = core.store.find(thread, "nodes", request.nodeId as string);
	return node ? core.handles.get(node.runId as string) : undefined;
}

export const REQUEST_COMMANDS: Record<string, CommandHandler> = {
	"runtime-request.respond": (core, thread, c) => {
		const requestId = String(c.requestId);
		const request = core.store.find(thread, "runtimeRequests", requestId);
		if (!request) return `Runtime request ${requestId} was not found.`;
		if (request.status !== "pending")
			return `Runtime request ${requestId} is not pending.`;
		const refused = respondRefusal(thread, request, c.decision);
		if (refused) return refused;
		const h = requestHandle(core, thread, request);
		const response: {
			decision?: string;
			answers?: Record<string, unknown>;
		} = {};
		if (c.decision !== undefined) response.decision = String(c.decision);
		if (c.answers !== undefined)
			response.answers = c.answers as Record<string, unknown>;
		return resolveRequest(core.kit, h, thread, request, response);
	},
	"thread.user-input.dismiss": (core, thread, c) => {
		const requestId = String(c.requestId);
		const request = core.store.find(thread, "runtimeRequests", requestId);
		if (!request) return `Runtime request ${requestId} was not found.`;
		return dismissRequest(
			core.kit,
			requestHandle(core, thread, request),
			thread,
			request,
		);
	},
};
