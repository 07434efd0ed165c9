/**
 * `thread.answered` (CONTRACT.md "Approval links"): the question or approval a watched thread
 * showed (its `thread.question` was emitted) is no longer the pending one — answered anywhere,
 * or dismissed. Who answered comes from the answer's note or the audit (approvals/answer-notes.ts),
 * null when it was answered in T3 itself. Never a link: links go to the people hook only.
 */
import { answeredBy } from "../approvals/answer-notes.ts";
import { questionKind, snakeDecision } from "../t3/derive/request-kinds.ts";
import type { Run } from "../t3/model.ts";
import type { EventBody } from "./event.ts";
import type { EventBuilder } from "./event-building.ts";

/** Request statuses of a run that ended while waiting: not answered (its outcome says it). */
const ENDED = new Set(["cancelled", "expired", "failed"]);

/** Pushes the event of the request the thread no longer waits for, if it showed one. */
export function answeredEvent(builder: EventBuilder, runs: Run[]): void {
	const { deps, entry, record, shell, projection, originOf } = builder;
	const previous = record.last_request_id;
	if (previous === null) return;
	if ((shell.pendingRuntimeRequest?.id ?? null) === previous) return;
	// Only a request the agents were told about is reported answered; its answer came after.
	const asked = deps.db
		.query<{ created_at: number }, { thread: string; key: string }>(
			"SELECT created_at FROM events WHERE thread_id = $thread AND dedupe_key = $key",
		)
		.get({ thread: record.thread_id, key: `request:${previous}` });
	if (!asked) return;
	const row = projection.runtimeRequests.find((r) => r.id === previous);
	const by = answeredBy(deps.db, record.thread_id, previous, asked.created_at);
	// Answered through the connector: reported whatever T3 shows yet. Otherwise only what T3
	// shows answered (or dismissed): a run that ended while waiting is its outcome's event, and
	// a request still pending in the projection is the shell running ahead.
	const known = by.client !== null;
	if (!known && (row === undefined || row.status === "pending")) return;
	if (!known && ENDED.has(String(row?.status))) return;
	const run =
		runs.find((r) => r.id === shell.activeRunId) ??
		runs.find((r) => r.id === record.last_run_id) ??
		runs.at(-1);
	builder.push(`answered:${previous}`, (id, seq) => {
		const body = {
			id,
			type: "thread.answered",
			occurred_at: new Date(deps.now()).toISOString(),
			machine: entry.config.name,
			thread_id: record.thread_id,
			// Like every thread event's: the receiver orders a thread's events by it.
			thread_seq: seq,
			request_id: previous,
			kind: row
				? questionKind(row.kind)
				: by.decision !== null
					? "approval"
					: "user_input",
			// Answered in T3 itself: the decision its row records, as the tools name it.
			decision:
				by.decision ??
				(!known && typeof row?.decision === "string"
					? snakeDecision(row.decision)
					: null),
			client: by.client,
			via: by.via,
			origin: run ? originOf(run.id, run.userMessageId) : record.origin,
		};
		// A body of its own (CONTRACT.md), stored like every event's.
		return body as unknown as EventBody;
	});
}
