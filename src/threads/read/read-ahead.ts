/**
 * A thread read started as soon as a request for it arrives, before the MCP layer has built its
 * server and validated the call: the T3 round trip then overlaps that work instead of following
 * it. It belongs to that one request (nothing is cached or shared), so it shows the thread as of
 * the request's arrival, never older. `readThread` uses it when the lookup lands on the same
 * machine; otherwise it is dropped.
 */
import type { ThreadDetail } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";

export interface ThreadReadAhead {
	threadId: string;
	machine: string;
	detail: Promise<ThreadDetail>;
}

/** Longest id worth a look; real ids are UUIDs. A longer one gets its error from the tool. */
const MAX_ID_LENGTH = 256;

export function startThreadRead(
	deps: ThreadDeps,
	threadId: unknown,
): ThreadReadAhead | undefined {
	if (
		typeof threadId !== "string" ||
		threadId.length === 0 ||
		threadId.length > MAX_ID_LENGTH
	)
		return undefined;
	// Only threads a visible shell lists: anything else takes the tool's own lookup path.
	const found = deps.fleet.locate(threadId);
	if (found === undefined) return undefined;
	if (found.entry.machine.status().state !== "online") return undefined;
	const detail = found.entry.machine.getThread(threadId);
	// The tool awaits it and reports its failure; unused, it must not be an unhandled rejection.
	detail.catch(() => {});
	return { threadId, machine: found.entry.config.name, detail };
}
