/**
 * The audit (CONTRACT.md "Clients and rights"): one row per call of a tool that changes
 * something (`t3_dispatch`, `t3_answer`, `t3_interrupt`, `t3_manage`, `t3_delete`,
 * `t3_project_add`, `t3_watch` with arguments), allowed or refused. Only who, what and where:
 * never prompt text, answers or tokens. Rows older than `audit_days` are pruned as new ones come.
 * Also how the call came (`via`) and which decision or action it was (`detail`, CONTRACT.md
 * "Trust round three"). Values are stored as given: `t3code-mcp audit` escapes them to print.
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
	/** The approval decision of `t3_answer`, the `t3_manage` action, or null. */
	detail: string | null;
	/** How the call came; null on rows written before it was recorded. */
	via: AuditVia | null;
}

/** The audit row of a change about no machine or thread (a console sign-in, an outbox replay). */
export function placelessRow(
	at: number,
	client: string,
	tool: string,
	result: string,
	via: AuditVia,
): AuditRow {
	return {
		at,
		client,
		tool,
		machine: null,
		project_id: null,
		thread_id: null,
		run_id: null,
		result,
		idempotency_key: null,
		detail: null,
		via,
	};
}

/** How a call reached the connector: MCP over HTTP, MCP over stdio, the console, an approval link. */
export type AuditVia = "mcp" | "stdio" | "console" | "link";

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
	// Prepared at the first row: `t3code-mcp audit` reads files read-only, perhaps not migrated yet.
	let insert: ReturnType<typeof db.query> | undefined;
	const insertSql = `INSERT INTO audit (at, client, tool, machine, project_id, thread_id, run_id, result, idempotency_key, detail, via)
		VALUES ($at, $client, $tool, $machine, $project_id, $thread_id, $run_id, $result, $idempotency_key, $detail, $via)`;
	const prune = db.query("DELETE FROM audit WHERE at < $before");
	let prunedAt = 0;
	return {
		record(row: AuditRow): void {
			// Ids and keys come from callers and T3; a key could quote a secret by mistake.
			insert ??= db.query(insertSql);
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
			// A file no server has migrated since rows gained them has no `detail` and `via`.
			const columns = new Set(
				db
					.query<{ name: string }, []>("PRAGMA table_info(audit)")
					.all()
					.map((c) => c.name),
			);
			const added = (["detail", "via"] as const)
				.map((c) => (columns.has(c) ? c : `NULL AS ${c}`))
				.join(", ");
			return db
				.query<AuditRow, Record<string, string | number>>(
					`SELECT at, client, tool, machine, project_id, thread_id, run_id, result, idempotency_key, ${added}
					FROM audit ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
					ORDER BY at DESC, id DESC LIMIT $limit`,
				)
				.all(params);
		},
	};
}

export type AuditStore = ReturnType<typeof createAuditStore>;
