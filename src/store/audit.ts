/**
 * The audit (CONTRACT.md "Clients and rights"): one row per call of a tool that changes
 * something (`t3_dispatch`, `t3_answer`, `t3_interrupt`, `t3_manage`, `t3_delete`,
 * `t3_project_add`, `t3_watch` with arguments), allowed or refused. Only who, what and where:
 * never prompt text, answers or tokens. Rows older than `audit_days` are pruned as new ones come.
 */
import { maskSecrets } from "../util/redact.ts";
import type { Db } from "./db.ts";

export interface AuditRow {
	/** Epoch milliseconds. */
	at: number;
	client: string;
	tool: string;
	machine: string | null;
	project_id: string | null;
	thread_id: string | null;
	run_id: string | null;
	/** `ok`, or the refusal's error code. */
	result: string;
	idempotency_key: string | null;
}

export interface AuditFilter {
	/** Epoch milliseconds: rows at or after it. */
	since?: number;
	client?: string;
	thread?: string;
	limit?: number;
}

const DAY_MS = 86_400_000;
/** Pruning runs at most this often: a delete per call would cost more than the row. */
const PRUNE_EVERY_MS = 60_000;

export function createAuditStore(db: Db, keepDays: number) {
	const insert = db.query(
		`INSERT INTO audit (at, client, tool, machine, project_id, thread_id, run_id, result, idempotency_key)
		VALUES ($at, $client, $tool, $machine, $project_id, $thread_id, $run_id, $result, $idempotency_key)`,
	);
	const prune = db.query("DELETE FROM audit WHERE at < $before");
	let prunedAt = 0;
	return {
		record(row: AuditRow): void {
			// Ids and keys come from callers and T3; a key could quote a secret by mistake.
			insert.run({
				...row,
				idempotency_key:
					row.idempotency_key === null
						? null
						: maskSecrets(row.idempotency_key),
			});
			if (row.at - prunedAt >= PRUNE_EVERY_MS) {
				prunedAt = row.at;
				prune.run({ before: row.at - keepDays * DAY_MS });
			}
		},
		/** Newest first. */
		list(filter: AuditFilter = {}): AuditRow[] {
			const where: string[] = [];
			const params: Record<string, string | number> = {};
			if (filter.since !== undefined) {
				where.push("at >= $since");
				params.since = filter.since;
			}
			if (filter.client !== undefined) {
				where.push("client = $client");
				params.client = filter.client;
			}
			if (filter.thread !== undefined) {
				where.push("thread_id = $thread");
				params.thread = filter.thread;
			}
			params.limit = filter.limit ?? -1;
			return db
				.query<AuditRow, Record<string, string | number>>(
					`SELECT at, client, tool, machine, project_id, thread_id, run_id, result, idempotency_key
					FROM audit ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
					ORDER BY at DESC, id DESC LIMIT $limit`,
				)
				.all(params);
		},
	};
}

export type AuditStore = ReturnType<typeof createAuditStore>;
