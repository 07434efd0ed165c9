/**
 * A thread's projection kept current from its `subscribeThread` stream (PROTOCOL.md §8.3):
 * a snapshot replaces it, each domain event upserts one full row by id. It also derives the
 * shell's activity summary (§7.2) from the rows, which the shell stream shows only coalesced
 * and late (OBSERVED.md §7). Pure: no sockets, no timers.
 */
import {
	decodeMessage,
	decodeRun,
	decodeRuntimeRequest,
	decodeThreadShell,
	decodeTurnItem,
	type ThreadEvent,
} from "./decode.ts";
import {
	BUSY_RUN_STATUSES,
	type PendingRuntimeRequest,
	type Run,
	type RuntimeRequest,
	type ThreadProjection,
	type ThreadShell,
} from "./model.ts";

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

/** Runtime-request kinds whose details live only in a turn item (OBSERVED.md §5.7). */
const ITEM_KINDS = new Set([
	"user_input",
	"command",
	"file-read",
	"file-change",
	"mcp-elicitation",
	"permission",
]);

export interface Activity {
	latestRunId: string | null;
	activeRunId: string | null;
	status: string;
	pendingRuntimeRequest: PendingRuntimeRequest | null;
}

export interface FollowedProjection {
	/** Applies one event; false when its payload could not be used (the cursor still advances). */
	apply(event: ThreadEvent): boolean;
	projection(): ThreadProjection;
	activity(): Activity;
	thread(): ThreadShell;
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

	const values = <T>(name: string) =>
		[...(rows.get(name)?.values() ?? [])] as unknown as T[];

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
			return true;
		},
		projection() {
			if (cached) return cached;
			// The snapshot's derived timeline (`visibleTurnItems`) is not kept current: left out
			// rather than served stale (the connector reads `turnItems`).
			const { visibleTurnItems: _, ...rest } = snapshot;
			const out: Record<string, unknown> = { ...rest, thread };
			for (const name of COLLECTIONS) out[name] = values(name);
			// Rows change by replacement, never in place: a caller's copy stays as it was read.
			cached = out as ThreadProjection;
			return cached;
		},
		activity() {
			if (cachedActivity) return cachedActivity;
			cachedActivity = deriveActivity(
				values<Run>("runs"),
				values<RuntimeRequest>("runtimeRequests"),
				withItem,
			);
			return cachedActivity;
		},
		thread: () => thread,
	};
}

/**
 * The shell's activity fields from the rows (§7.2, §7.4): status of the latest run, the run
 * blocking the thread, and the newest pending request — once its turn item (which holds the
 * question or the approval prompt) has arrived too, since the two come in separate frames.
 */
function deriveActivity(
	runs: Run[],
	requests: RuntimeRequest[],
	withItem: ReadonlySet<string>,
): Activity {
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
		if (ITEM_KINDS.has(request.kind) && !withItem.has(request.id)) continue;
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

export function sameActivity(a: Activity, b: Activity): boolean {
	return (
		a.latestRunId === b.latestRunId &&
		a.activeRunId === b.activeRunId &&
		a.status === b.status &&
		a.pendingRuntimeRequest?.id === b.pendingRuntimeRequest?.id
	);
}
