/** Outbox depth, age and dead letters for /healthz and /metrics. */
import type { Db } from "./db.ts";

export interface OutboxStats {
	pending: number;
	oldestPendingS: number;
	/** Events of projects not allowed now: kept, not counted in `pending`. */
	held: number;
	dead: number;
	lastError: string | null;
}

export function outboxStats(
	db: Db,
	now: number,
	/** `events` (the agents' hook) or `people_events` (the approvals hook). */
	table: "events" | "people_events" = "events",
): OutboxStats {
	// Each query reads only the status index or the rows that carry an error.
	const pending = db
		.query<{ n: number; oldest: number | null }, []>(
			`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM ${table} WHERE status = 'pending'`,
		)
		.get();
	const dead = db
		.query<{ n: number }, []>(
			`SELECT COUNT(*) AS n FROM ${table} WHERE status = 'dead'`,
		)
		.get();
	const held = db
		.query<{ n: number }, []>(
			`SELECT COUNT(*) AS n FROM ${table} WHERE status = 'held'`,
		)
		.get();
	const last = db
		.query<{ last_error: string }, []>(
			`SELECT last_error FROM ${table} WHERE last_error IS NOT NULL ORDER BY created_at DESC LIMIT 1`,
		)
		.get();
	return {
		pending: pending?.n ?? 0,
		oldestPendingS: pending?.oldest
			? Math.max(0, Math.round((now - pending.oldest) / 1000))
			: 0,
		held: held?.n ?? 0,
		dead: dead?.n ?? 0,
		lastError: last?.last_error ?? null,
	};
}
