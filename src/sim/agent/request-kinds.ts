/**
 * The runtime requests `runtime-request.respond` cannot answer (RELEASED-0.1.md §1): an
 * `auth_refresh` (the provider is signed in again on the host), a `dynamic_tool_call` (a T3
 * client answers it) and any request marked `not_resumable`; and, for approvals that list
 * `options`, decisions that are not among them. `Sim.finishRun` stands in for the person who
 * resolves the first three elsewhere.
 */
import type { Row } from "../engine/rows.ts";
import type { ThreadState } from "../engine/store.ts";
import { endRequest } from "../runs/run-lifecycle.ts";
import type { RunHandle, RunKit } from "../runs/run-rows.ts";

const ANSWERED_ELSEWHERE = new Set(["auth_refresh", "dynamic_tool_call"]);

function notResumable(request: Row): string | null {
	const capability = (request.responseCapability ?? {}) as {
		type?: unknown;
		reason?: unknown;
	};
	return capability.type === "not_resumable"
		? String(capability.reason ?? "not resumable")
		: null;
}

/** Why `runtime-request.respond` is refused for this request and decision; null when accepted. */
export function respondRefusal(
	thread: ThreadState,
	request: Row,
	decision: unknown,
): string | null {
	const stale = notResumable(request);
	if (stale !== null)
		return `Runtime request ${request.id} cannot be resumed: ${stale}.`;
	if (ANSWERED_ELSEWHERE.has(String(request.kind)))
		return `Runtime request ${request.id} (${String(request.kind)}) cannot be answered with runtime-request.respond.`;
	const item = thread.rows.turnItems.find((i) => i.requestId === request.id);
	const options = Array.isArray(item?.options)
		? (item.options as { decision?: unknown }[])
		: [];
	if (
		decision !== undefined &&
		options.length > 0 &&
		!options.some((o) => o.decision === decision)
	)
		return `Decision ${String(decision)} is not offered for runtime request ${request.id}.`;
	return null;
}

/** Resolves the run's pending request when only a person elsewhere could; true if it did. */
export function resolveElsewhere(kit: RunKit, h: RunHandle): boolean {
	const requestId = h.pending?.requestId;
	if (!requestId) return false;
	const request = kit.store.find(h.thread, "runtimeRequests", requestId);
	if (
		request?.status !== "pending" ||
		(!ANSWERED_ELSEWHERE.has(String(request.kind)) &&
			notResumable(request) === null)
	)
		return false;
	endRequest(kit, h, h.thread, request, {
		recorded: {},
		closedAs: "completed",
		answer: {},
	});
	return true;
}
