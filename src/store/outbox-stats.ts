/** Outbox depth, age and dead letters for /healthz and /metrics. */
import type { Db } from "./db.ts";

export interface OutboxStats {
	pending: number;
	oldestPendingS: number;
	dead: number;
	lastError: string | null;
}

export function outboxStats(db: Db, now: number): OutboxStats {
	const row = db
		.query<{ pending: number; oldest: number | null; dead: number }, []>(
			`SELECT SUM(status = 'pending') AS pending, MIN(CASE WHEN status = 'pending' THEN created_at END) AS oldest,
			        SUM(status = 'dead') AS dead FROM events`,
		)
		.get();
	const last = db
		.query<{ last_error: string }, []>(
			"SELECT last_error FROM events WHERE last_error IS NOT NULL ORDER BY rowid DESC LIMIT 1",
		)
		.get();
	return {
		pending: row?.pending ?? 0,
		oldestPendingS: row?.oldest
			? Math.max(0, Math.round((now - row.oldest) / 1000))
			: 0,
		dead: row?.dead ?? 0,
		lastError: last?.last_error ?? null,
	};
}
