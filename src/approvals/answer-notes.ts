/**
 * Who answered a request, for the events that say it was answered (`approval.settled` on the
 * people hook, `thread.answered` on the agents' one). `t3_answer` and a link note the answer
 * just before sending it (T3's shell may show the request gone before the call returns); after a
 * restart the audit table says it. Requests answered in T3 itself are known to neither: null.
 */
import type { AuditVia } from "../store/audit.ts";
import type { Db } from "../store/db.ts";

export interface AnsweredBy {
	/** The approval decision (snake_case), or null: a question's answers, a dismissal, unknown. */
	decision: string | null;
	client: string | null;
	via: AuditVia | null;
}

export const UNKNOWN_ANSWER: AnsweredBy = {
	decision: null,
	client: null,
	via: null,
};

const notes = new Map<string, AnsweredBy>();
const key = (threadId: string, requestId: string) =>
	`${threadId}\u0000${requestId}`;

/** Notes an answer about to be sent. */
export function noteAnswer(
	threadId: string,
	requestId: string,
	by: AnsweredBy,
): void {
	notes.set(key(threadId, requestId), by);
	// Only the latest matter (the events follow within moments); keep it bounded.
	if (notes.size > 1_000) notes.delete(notes.keys().next().value as string);
}

/** The answer was not sent after all. */
export function forgetAnswer(threadId: string, requestId: string): void {
	notes.delete(key(threadId, requestId));
}

/**
 * Who answered: the note, else the newest allowed `t3_answer` audit row of the thread that
 * names this request (or none) since `since`, else unknown.
 */
export function answeredBy(
	db: Db,
	threadId: string,
	requestId: string,
	since: number,
): AnsweredBy {
	const noted = notes.get(key(threadId, requestId));
	if (noted) return noted;
	try {
		const row = db
			.query<
				{ client: string; via: AuditVia | null; detail: string | null },
				{ thread: string; request: string; since: number }
			>(
				`SELECT client, via, detail FROM audit WHERE tool = 't3_answer' AND result = 'ok'
				 AND thread_id = $thread AND (idempotency_key = $request OR idempotency_key IS NULL)
				 AND at >= $since ORDER BY at DESC, id DESC LIMIT 1`,
			)
			.get({ thread: threadId, request: requestId, since });
		return row
			? { decision: row.detail, client: row.client, via: row.via }
			: UNKNOWN_ANSWER;
	} catch {
		// A state file without the audit table (never migrated this far): nothing is known.
		return UNKNOWN_ANSWER;
	}
}
