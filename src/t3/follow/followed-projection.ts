/**
 * A thread's projection kept current from its `subscribeThread` stream (PROTOCOL.md §8.3):
 * a snapshot replaces it, each domain event upserts one full row by id. It also derives the
 * shell's activity summary (§7.2) from the rows, which the shell stream shows only coalesced
 * and late (OBSERVED.md §7). Pure: no sockets, no timers.
 */

import { approxBytes } from "../../util/approx-bytes.ts";
import {
	decodeMessage,
	decodeRun,
	decodeRuntimeRequest,
	decodeTurnItem,
} from "../decode/rows.ts";
import { decodeThreadShell } from "../decode/shell.ts";
import type { ThreadEvent } from "../decode/thread-stream.ts";
import { type ThreadActivity, threadActivity } from "../derive/derive.ts";
import {
	type ConversationMessage,
	type Run,
	type RuntimeRequest,
	TERMINAL_RUN_STATUSES,
	type ThreadProjection,
	type ThreadShell,
} from "../model.ts";

type Row = { id: string; [key: string]: unknown };

/** Which projection list a domain event's payload row belongs to (§8.3). */
const COLLECTION_OF: Record<string, string> = {
	"run.created": "runs",
	"run.updated": "runs",
	"run-attempt.created": "attempts",
	"run-attempt.updated": "attempts",
	"node.updated": "nodes",
	"subagent.updated": "subagents",
	"provider-session.attached": "providerSessions",
	"provider-session.updated": "providerSessions",
	"provider-thread.updated": "providerThreads",
	"provider-turn.updated": "providerTurns",
	"runtime-request.updated": "runtimeRequests",
	"message.updated": "messages",
	"turn-item.updated": "turnItems",
	"plan.updated": "plans",
	"checkpoint-scope.created": "checkpointScopes",
	"checkpoint.captured": "checkpoints",
	"context-handoff.updated": "contextHandoffs",
	"context-transfer.created": "contextTransfers",
	"context-transfer.updated": "contextTransfers",
};

const COLLECTIONS = [...new Set(Object.values(COLLECTION_OF))];

/** Lists of the thread as a whole (a handful of rows), kept when a view is trimmed. */
const THREAD_LEVEL = new Set([
	"providerSessions",
	"providerThreads",
	"checkpointScopes",
]);

const DECODERS: Record<string, (raw: unknown) => Row> = {
	runs: decodeRun,
	messages: decodeMessage,
	turnItems: decodeTurnItem,
	runtimeRequests: decodeRuntimeRequest,
};

function plainRow(raw: unknown): Row {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw))
		throw new Error("row is not an object");
	const row = raw as Record<string, unknown>;
	if (typeof row.id !== "string" || row.id.length === 0)
		throw new Error("row without id");
	return row as Row;
}

export type Activity = ThreadActivity;

export interface FollowedProjection {
	/** Applies one event; false when its payload could not be used (the cursor still advances). */
	apply(event: ThreadEvent): boolean;
	projection(): ThreadProjection;
	activity(): Activity;
	/**
	 * The newest message with text, as a shell's `latestVisibleMessage`: what a shell of the
	 * newest T3 leaves null ("Thread detail owns message bodies", idx 70189692800).
	 */
	latestMessage(): ThreadShell["latestVisibleMessage"];
	thread(): ThreadShell;
	/** How many rows it holds. */
	rowCount(): number;
	/** Roughly how many bytes its rows hold (util/approx-bytes.ts): what keeping it costs. */
	approxBytes(): number;
	/**
	 * Drops every row but those of the latest run, of runs still going, of pending requests and
	 * of the thread itself: what activity and the next run's readers need. For a view that is
	 * a window anyway (a bounded snapshot), kept only to resume from.
	 */
	trimToRecent(): void;
}

export function createFollowedProjection(
	snapshot: ThreadProjection,
): FollowedProjection {
	let thread = snapshot.thread;
	const rows = new Map<string, Map<string, Row>>();
	for (const name of COLLECTIONS) {
		const list = snapshot[name];
		rows.set(
			name,
			new Map(
				(Array.isArray(list) ? (list as Row[]) : [])
					.filter((r) => typeof r?.id === "string")
					.map((r) => [r.id, r]),
			),
		);
	}
	/** Request ids that have their turn item (kept as items arrive, not rescanned). */
	const withItem = new Set<string>();
	for (const item of rows.get("turnItems")?.values() ?? [])
		if (typeof item.requestId === "string") withItem.add(item.requestId);
	let cached: ThreadProjection | null = null;
	let cachedActivity: Activity | null = null;
	let cachedMessage: ThreadShell["latestVisibleMessage"] | undefined;
	// Only the snapshot's other fields are kept: its lists live on as `rows`. Of its derived
	// timeline (`visibleTurnItems`, often as large as the rest) only the rows that are not the
	// thread's own stay: a fork's inherited prefix and marker, fixed at the forked run, which no
	// event of the fork changes (idx 70189692800). Its own rows would go stale; `turnItems` has them.
	const others: Record<string, unknown> = { ...snapshot };
	const inherited = Array.isArray(snapshot.visibleTurnItems)
		? snapshot.visibleTurnItems.filter((row) =>
				["inherited", "synthetic"].includes(
					String((row as { visibility?: unknown } | null)?.visibility),
				),
			)
		: [];
	if (inherited.length > 0) others.visibleTurnItems = inherited;
	else delete others.visibleTurnItems;
	for (const name of COLLECTIONS) delete others[name];

	const values = <T>(name: string) =>
		[...(rows.get(name)?.values() ?? [])] as unknown as T[];
	const activity = (): Activity => {
		if (cachedActivity) return cachedActivity;
		cachedActivity = threadActivity(
			values<Run>("runs"),
			values<RuntimeRequest>("runtimeRequests"),
			(id) => withItem.has(id),
		);
		return cachedActivity;
	};

	return {
		apply(event) {
			const name = COLLECTION_OF[event.type];
			try {
				if (name) {
					const row = (DECODERS[name] ?? plainRow)(event.payload);
					rows.get(name)?.set(row.id, row);
					if (name === "turnItems" && typeof row.requestId === "string")
						withItem.add(row.requestId);
				} else if (event.type.startsWith("thread.")) {
					thread = decodeThreadShell(event.payload);
				} else if (event.type === "provider-session.detached") {
					const p = event.payload as Record<string, unknown> | null;
					const sessions = rows.get("providerSessions");
					const id =
						typeof p?.providerSessionId === "string" ? p.providerSessionId : "";
					const row = sessions?.get(id);
					if (row) sessions?.set(id, { ...row, status: "stopped" });
				} else {
					return true; // not part of what the connector reads
				}
			} catch {
				return false;
			}
			cached = null;
			cachedActivity = null;
			cachedMessage = undefined;
			return true;
		},
		projection() {
			if (cached) return cached;
			// The thread's activity as its current rows say, not as the snapshot or a
			// `thread.*` event (an AppThread without the summary) left it.
			const out: Record<string, unknown> = {
				...others,
				thread: { ...thread, ...activity() },
			};
			for (const name of COLLECTIONS) out[name] = values(name);
			// Rows change by replacement, never in place: a caller's copy stays as it was read.
			cached = out as ThreadProjection;
			return cached;
		},
		activity,
		latestMessage() {
			if (cachedMessage !== undefined) return cachedMessage;
			let newest: ConversationMessage | null = null;
			for (const m of values<ConversationMessage>("messages"))
				if (
					m.text &&
					(!newest || (m.updatedAt ?? "") >= (newest.updatedAt ?? ""))
				)
					newest = m;
			cachedMessage = newest
				? {
						id: newest.id,
						role: newest.role,
						text: newest.text,
						...(newest.updatedAt ? { updatedAt: newest.updatedAt } : {}),
					}
				: null;
			return cachedMessage;
		},
		thread: () => thread,
		trimToRecent() {
			const runs = rows.get("runs") ?? new Map<string, Row>();
			let latest: Row | undefined;
			for (const run of runs.values())
				if (!latest || ordinalOf(run) > ordinalOf(latest)) latest = run;
			const keptRuns = new Set<string>();
			for (const run of runs.values())
				if (run === latest || !TERMINAL_RUN_STATUSES.has(String(run.status)))
					keptRuns.add(run.id);
			const requests = rows.get("runtimeRequests");
			const keptRequests = new Set<string>();
			for (const request of requests?.values() ?? [])
				if (request.status === "pending" || keptRuns.has(String(request.runId)))
					keptRequests.add(request.id);
			const keptAttempts = new Set<string>();
			for (const attempt of rows.get("attempts")?.values() ?? [])
				if (keptRuns.has(String(attempt.runId))) keptAttempts.add(attempt.id);
			for (const [name, list] of rows) {
				if (THREAD_LEVEL.has(name)) continue;
				for (const [id, row] of list) {
					const keep =
						name === "runs"
							? keptRuns.has(id)
							: name === "runtimeRequests"
								? keptRequests.has(id)
								: keptRuns.has(String(row.runId)) ||
									keptAttempts.has(String(row.runAttemptId));
					if (!keep) list.delete(id);
				}
			}
			for (const id of withItem) if (!keptRequests.has(id)) withItem.delete(id);
			cached = null;
			cachedActivity = null;
			cachedMessage = undefined;
		},
		rowCount: () => {
			let n = 0;
			for (const list of rows.values()) n += list.size;
			return n;
		},
		approxBytes: () => {
			// The snapshot's other fields too: a fork's inherited conversation lives there.
			let bytes = approxBytes(thread) + approxBytes(others);
			for (const list of rows.values())
				for (const row of list.values()) bytes += approxBytes(row);
			return bytes;
		},
	};
}

function ordinalOf(row: Row): number {
	return typeof row.ordinal === "number" ? row.ordinal : -1;
}

export function sameActivity(a: Activity, b: Activity): boolean {
	return (
		a.latestRunId === b.latestRunId &&
		a.activeRunId === b.activeRunId &&
		a.status === b.status &&
		a.pendingRuntimeRequest?.id === b.pendingRuntimeRequest?.id
	);
}
