/**
 * The event outbox: rows are written in the same transaction as the thread state that produced
 * them, and leave only by delivery (then compaction) or dead-lettering. `(thread_id, dedupe_key)`
 * is unique, so replays, snapshots and reconnects can never emit the same transition twice.
 * A thread's pending rows are `held` while its project is not allowed (kept, never sent) and
 * pending again once it is.
 */
import { maskJsonText } from "../util/redact.ts";
import type { Db } from "./db.ts";

export interface EventRow {
	id: string;
	thread_id: string;
	thread_seq: number;
	dedupe_key: string;
	type: string;
	origin: string | null;
	body: string;
	status: "pending" | "held" | "delivered" | "dead";
	attempts: number;
	next_attempt_at: number;
	last_error: string | null;
	created_at: number;
	delivered_at: number | null;
}

/** The agents' hook reads `events`; the people hook (src/approvals) its own `people_events`. */
export type OutboxTable = "events" | "people_events";

export function createOutbox(db: Db, table: OutboxTable = "events") {
	const exists = db.query<{ one: number }, { thread: string; key: string }>(
		`SELECT 1 AS one FROM ${table} WHERE thread_id = $thread AND dedupe_key = $key`,
	);
	const insert = db.query(
		`INSERT INTO ${table} (id, thread_id, thread_seq, dedupe_key, type, origin, body, status, next_attempt_at, created_at)
		 VALUES ($id, $thread_id, $thread_seq, $dedupe_key, $type, $origin, $body, 'pending', $created_at, $created_at)`,
	);
	// The head of each thread's queue only: one thread's events never overtake each other. Walked
	// in due order on `events_due`, each candidate checked on `events_pending`, so a pump reads
	// about `limit` rows however long the backlog (a grouped `SELECT *` read every pending row,
	// bodies included, on every pump: ~1.7 ms at 300 pending, which a backlog under load reached,
	// and a slower pump grew the backlog further).
	const isHead = `NOT EXISTS (SELECT 1 FROM ${table} p WHERE p.status = 'pending' AND p.thread_id = e.thread_id AND p.thread_seq < e.thread_seq)`;
	const due = db.query<EventRow, { now: number; limit: number; upTo: number }>(
		`SELECT * FROM ${table} e WHERE e.status = 'pending' AND e.next_attempt_at <= $now AND +e.rowid <= $upTo AND ${isHead}
		 ORDER BY e.next_attempt_at, e.created_at LIMIT $limit`,
	);
	const lastRowid = db.query<{ last: number | null }, []>(
		`SELECT max(rowid) AS last FROM ${table}`,
	);
	const nextDue = db.query<{ at: number | null }, []>(
		`SELECT e.next_attempt_at AS at FROM ${table} e WHERE e.status = 'pending' AND ${isHead}
		 ORDER BY e.next_attempt_at LIMIT 1`,
	);
	const delivered = db.query(
		`UPDATE ${table} SET status = 'delivered', attempts = attempts + 1, delivered_at = $now, last_error = NULL WHERE id = $id`,
	);
	const retry = db.query(
		`UPDATE ${table} SET attempts = attempts + 1, next_attempt_at = $at, last_error = $error WHERE id = $id`,
	);
	const dead = db.query(
		`UPDATE ${table} SET status = 'dead', attempts = attempts + 1, last_error = $error WHERE id = $id`,
	);
	const replayDead = db.query(
		`UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = $now WHERE status = 'dead'`,
	);
	const compact = db.query(
		`DELETE FROM ${table} WHERE status = 'delivered' AND delivered_at < $before`,
	);
	const hold = db.query(
		`UPDATE ${table} SET status = 'held' WHERE thread_id = $thread AND status = 'pending'`,
	);
	const release = db.query(
		`UPDATE ${table} SET status = 'pending' WHERE thread_id = $thread AND status = 'held'`,
	);
	const waiting = db.query<
		{ thread_id: string; status: "pending" | "held" },
		[]
	>(
		`SELECT DISTINCT thread_id, status FROM ${table} WHERE status IN ('pending', 'held')`,
	);
	const bodyOf = db.query<{ body: string }, { id: string }>(
		`SELECT body FROM ${table} WHERE id = $id`,
	);
	const setBody = db.query(`UPDATE ${table} SET body = $body WHERE id = $id`);
	const list = db.query<EventRow, { thread: string }>(
		`SELECT * FROM ${table} WHERE thread_id = $thread ORDER BY thread_seq`,
	);

	return {
		has: (threadId: string, dedupeKey: string) =>
			exists.get({ thread: threadId, key: dedupeKey }) !== null,
		insert: (
			row: Pick<
				EventRow,
				| "id"
				| "thread_id"
				| "thread_seq"
				| "dedupe_key"
				| "type"
				| "origin"
				| "body"
				| "created_at"
			>,
		) => {
			// The body quotes T3 (titles, message, question): the safety net before it is stored.
			insert.run({ ...row, body: maskJsonText(row.body) });
		},
		due: (
			now: number,
			limit: number,
			upToRowid = Number.MAX_SAFE_INTEGER,
		): EventRow[] => due.all({ now, limit, upTo: upToRowid }),
		lastRowid: (): number => lastRowid.get()?.last ?? 0,
		nextDueAt: (): number | null => nextDue.get()?.at ?? null,
		markDelivered: (id: string, now: number) => {
			delivered.run({ id, now });
		},
		markRetry: (id: string, at: number, error: string) => {
			retry.run({ id, at, error });
		},
		markDead: (id: string, error: string) => {
			dead.run({ id, error });
		},
		/** Puts every dead-lettered event back in line; returns how many. */
		replayDead: (now: number): number => replayDead.run({ now }).changes,
		compact: (before: number): number => compact.run({ before }).changes,
		forThread: (threadId: string): EventRow[] => list.all({ thread: threadId }),
		/** Holds a thread's pending rows back (its project is not allowed now); returns how many. */
		hold: (threadId: string): number => hold.run({ thread: threadId }).changes,
		/** Puts a thread's held rows back in line; returns how many. */
		release: (threadId: string): number =>
			release.run({ thread: threadId }).changes,
		/** Threads with rows waiting to be sent (`pending`) or held back (`held`). */
		waiting: () => waiting.all(),
		/** Rewrites a row's body (an approval link masked once sent or dead). */
		rewriteBody(id: string, rewrite: (body: string) => string): void {
			const row = bodyOf.get({ id });
			if (!row) return;
			const body = rewrite(row.body);
			if (body !== row.body) setBody.run({ id, body });
		},
	};
}

export type Outbox = ReturnType<typeof createOutbox>;
