/**
 * A thread's activity summary derived from its rows (PROTOCOL.md §7.2, §7.4): latest and
 * blocking run, status, and the pending request once its turn item is there. The shells carry
 * it from T3; projections and followed threads get it from here.
 */

import {
	BUSY_RUN_STATUSES,
	type PendingRuntimeRequest,
	type Run,
	type RuntimeRequest,
} from "../model.ts";

/** A thread shell's activity summary (PROTOCOL.md §7.2). */
export interface ThreadActivity {
	latestRunId: string | null;
	activeRunId: string | null;
	status: string;
	pendingRuntimeRequest: PendingRuntimeRequest | null;
}

/** Runtime-request kinds whose details live only in a turn item (OBSERVED.md §5.7). */
const ITEM_KINDS = new Set([
	"user_input",
	"command",
	"file-read",
	"file-change",
	"mcp-elicitation",
	"permission",
]);

/**
 * A thread's activity summary from its rows, as T3 derives its shell's (§7.2, §7.4): the
 * latest run's status ("idle" without runs), the run blocking the thread, and the newest
 * pending request once its turn item (which holds the question or the approval prompt) is
 * there too. The one derivation behind every thread status shown: T3's shells carry it, its
 * projections (an AppThread without the summary) get it from here.
 */
export function threadActivity(
	runs: readonly Run[],
	requests: readonly RuntimeRequest[],
	hasItem: (requestId: string) => boolean,
): ThreadActivity {
	let latest: Run | null = null;
	let active: Run | null = null;
	for (const run of runs) {
		if (!latest || run.ordinal > latest.ordinal) latest = run;
		if (
			BUSY_RUN_STATUSES.has(run.status) &&
			run.status !== "queued" &&
			(!active || run.ordinal < active.ordinal)
		)
			active = run;
	}
	let pending: PendingRuntimeRequest | null = null;
	for (const request of requests) {
		if (request.status !== "pending") continue;
		if (ITEM_KINDS.has(request.kind) && !hasItem(request.id)) continue;
		pending = { id: request.id, kind: request.kind };
		if (typeof request.createdAt === "string")
			pending.createdAt = request.createdAt;
	}
	return {
		latestRunId: latest?.id ?? null,
		activeRunId: active?.id ?? null,
		status: latest ? latest.status : "idle",
		pendingRuntimeRequest: pending,
	};
}
