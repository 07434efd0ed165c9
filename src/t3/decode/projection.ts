/** A thread projection (PROTOCOL.md §7.3) and the answers that carry one. */
import { threadActivity } from "../derive/derive.ts";
import type {
	LaunchThreadResult,
	ThreadDetail,
	ThreadProjection,
} from "../model.ts";
import { isRecord, list, num, record, requireId } from "./json.ts";
import {
	decodeMessage,
	decodeProviderSession,
	decodeRun,
	decodeRuntimeRequest,
	decodeTurnItem,
} from "./rows.ts";
import { decodeThreadShell } from "./shell.ts";

export function decodeThreadProjection(raw: unknown): ThreadProjection {
	const obj = record(raw, "thread projection");
	const projection: ThreadProjection = {
		...obj,
		thread: decodeThreadShell(obj.thread),
		runs: list(obj.runs, decodeRun),
		messages: list(obj.messages, decodeMessage),
		turnItems: list(obj.turnItems, decodeTurnItem),
		runtimeRequests: list(obj.runtimeRequests, decodeRuntimeRequest),
		providerSessions: list(obj.providerSessions, decodeProviderSession),
	};
	// The projection's thread is an AppThread without the shell's activity summary (OBSERVED.md
	// §6.5): derived from the rows as the shell's is, it never reads "idle" beside its runs.
	if (!isRecord(obj.thread) || typeof obj.thread.status !== "string") {
		const { turnItems } = projection;
		Object.assign(
			projection.thread,
			threadActivity(projection.runs, projection.runtimeRequests, (id) =>
				turnItems.some((i) => i.requestId === id),
			),
		);
	}
	return projection;
}

export function decodeThreadDetail(raw: unknown): ThreadDetail {
	const obj = record(raw, "thread detail");
	return {
		...obj,
		snapshotSequence: num(obj.snapshotSequence) ?? 0,
		projection: decodeThreadProjection(obj.projection),
	};
}

export function decodeLaunchResult(raw: unknown): LaunchThreadResult {
	const obj = record(raw, "launchThread result");
	return {
		...obj,
		threadId: requireId(obj, "launchThread result", "threadId"),
		projection: decodeThreadProjection(obj.projection),
		resumed: obj.resumed === true,
	};
}
