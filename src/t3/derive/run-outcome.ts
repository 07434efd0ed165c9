/**
 * A run's outcome and where it stands in its thread (PROTOCOL.md §7.4): the terminal outcome of
 * a status, the run a message started, the latest and settled runs, and the failure text that
 * belongs to the run's current state. Pure functions over the read models.
 */

import { redact } from "../../util/redact.ts";
import type { Run, ThreadProjection, ThreadShell } from "../model.ts";
import { currentErrorItems } from "./current-errors.ts";

export type RunOutcome = "completed" | "interrupted" | "failed";

/** The terminal outcome of a run status, or null while the run is not finished. */
export function runOutcome(status: string): RunOutcome | null {
	switch (status) {
		case "completed":
			return "completed";
		case "interrupted":
		case "cancelled":
		case "rolled_back":
			return "interrupted";
		case "failed":
			return "failed";
		default:
			return null;
	}
}

/**
 * The run a message of ours started (`run.userMessageId`, §5.1), or was steered into (the
 * message's `runId`, §7.3); null when not there yet.
 */
export function findRunByMessageId(
	projection: ThreadProjection,
	messageId: string,
): Run | null {
	const started = projection.runs.find((r) => r.userMessageId === messageId);
	if (started) return started;
	const runId = projection.messages.find((m) => m.id === messageId)?.runId;
	return runId ? (projection.runs.find((r) => r.id === runId) ?? null) : null;
}

/** The run with the highest ordinal. */
export function latestRun(projection: ThreadProjection): Run | null {
	let best: Run | null = null;
	for (const run of projection.runs)
		if (!best || run.ordinal > best.ordinal) best = run;
	return best;
}

/**
 * The failure text of a run, only while it belongs to the run's current state
 * (current-errors.ts): its current `error` items, else — for a failed run that is the thread's
 * latest — the thread's `lastError` (from the projection: held shells do not keep it, so a
 * `shell` given only says which run is the latest). None while the run is busy or once it
 * completed, even if an earlier attempt failed (a retried workspace preparation). It comes from
 * the provider or T3 (it may quote a credential), so it is redacted and capped like all outside
 * text.
 */
export function runError(
	projection: ThreadProjection,
	runId: string,
	shell?: ThreadShell,
): string | null {
	for (const item of currentErrorItems(projection, runId)) {
		const text = item.failure?.message ?? item.message ?? item.title;
		if (typeof text === "string" && text.length > 0) return redact(text);
	}
	const run = projection.runs.find((r) => r.id === runId);
	const thread = shell ?? projection.thread;
	const latest = thread.latestRunId == null || thread.latestRunId === runId;
	if (run?.status !== "failed" || !latest) return null;
	const lastError = shell?.lastError ?? projection.thread.lastError;
	return typeof lastError === "string" && lastError.length > 0
		? redact(lastError)
		: null;
}

/**
 * The ordinal up to which runs are settled: the latest run's if it has finished, else the one
 * before it. Runs at or below it never produce events for a thread that starts being watched.
 */
export function settledOrdinal(projection: ThreadProjection): number {
	const latest = latestRun(projection);
	if (!latest) return 0;
	return latest.completedAt ? latest.ordinal : latest.ordinal - 1;
}
