/**
 * The connector's sqlite database: thread records, dispatches, idempotency keys, the event
 * outbox and MCP tasks.
 * WAL + FULL sync so "recorded" means "on disk" even across power loss; migrations are
 * numbered in code and applied in one transaction each.
 */

import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { LINKS_TABLE_SQL } from "../approvals/link-store.ts";
import { SESSIONS_TABLE_SQL } from "../console/session-table.ts";
import { maskJsonText, maskSecrets, redact } from "../util/redact.ts";
import { HELD_TABLE_SQL } from "./held-store.ts";
import { maskBoundTexts } from "./masking-net.ts";

/**
 * Masks every text from outside already in the file, once (CONTRACT.md "HTTP"): rows written
 * before every T3 text was masked may hold a configured secret. Runs with the secrets of the
 * configuration the server starts with (registered before the file is opened).
 */
function maskStoredText(db: Db): void {
	const rows = <T>(sql: string) => db.query<T, []>(sql).all();
	const setThread = db.query(
		"UPDATE threads SET title = $title, project_title = $pt, project_path = $pp WHERE thread_id = $id",
	);
	for (const r of rows<{
		thread_id: string;
		title: string;
		project_title: string | null;
		project_path: string | null;
	}>("SELECT thread_id, title, project_title, project_path FROM threads")) {
		const title = maskSecrets(r.title);
		const pt = r.project_title === null ? null : maskSecrets(r.project_title);
		const pp = r.project_path === null ? null : maskSecrets(r.project_path);
		if (title !== r.title || pt !== r.project_title || pp !== r.project_path)
			setThread.run({ id: r.thread_id, title, pt, pp });
	}
	const setEvent = db.query(
		"UPDATE events SET body = $body, last_error = $error WHERE id = $id",
	);
	for (const r of rows<{ id: string; body: string; last_error: string | null }>(
		"SELECT id, body, last_error FROM events",
	)) {
		const body = maskJsonText(r.body);
		const error = r.last_error === null ? null : redact(r.last_error);
		if (body !== r.body || error !== r.last_error)
			setEvent.run({ id: r.id, body, error });
	}
	const setOperation = db.query(
		"UPDATE operations SET result = $result, project_title = $pt, project_path = $pp WHERE tool = $tool AND key = $key",
	);
	for (const r of rows<{
		tool: string;
		key: string;
		result: string | null;
		project_title: string | null;
		project_path: string | null;
	}>("SELECT tool, key, result, project_title, project_path FROM operations")) {
		const result = r.result === null ? null : maskJsonText(r.result);
		const pt = r.project_title === null ? null : maskSecrets(r.project_title);
		const pp = r.project_path === null ? null : maskSecrets(r.project_path);
		if (result !== r.result || pt !== r.project_title || pp !== r.project_path)
			setOperation.run({ tool: r.tool, key: r.key, result, pt, pp });
	}
}

/**
 * Clients and rights (src/rights): who dispatched a thread and owns a task, and the audit of
 * every change a client asked for, allowed or refused (src/store/audit.ts). Written as code so
 * it also applies to files whose earlier steps are replayed (tests of older schemas).
 */
function addClients(db: Db): void {
	const has = (table: string, column: string) =>
		db
			.query<{ name: string }, []>(`PRAGMA table_info(${table})`)
			.all()
			.some((c) => c.name === column);
	if (!has("threads", "client"))
		db.exec("ALTER TABLE threads ADD COLUMN client TEXT");
	if (!has("tasks", "client"))
		db.exec("ALTER TABLE tasks ADD COLUMN client TEXT");
	db.exec(`CREATE TABLE IF NOT EXISTS audit (
		id INTEGER PRIMARY KEY,
		at INTEGER NOT NULL,
		client TEXT NOT NULL,
		tool TEXT NOT NULL,
		machine TEXT,
		project_id TEXT,
		thread_id TEXT,
		run_id TEXT,
		result TEXT NOT NULL,
		idempotency_key TEXT
	) STRICT;
	CREATE INDEX IF NOT EXISTS audit_by_at ON audit(at);`);
}

/**
 * Audit rows say how the call came (`via`: mcp, stdio, console, link) and, for an approval
 * decision or a `t3_manage` action, which (`detail`) (CONTRACT.md "Trust round three"). Rows
 * written before keep null in both: how they came was not recorded.
 */
function addAuditDetail(db: Db): void {
	const columns = new Set(
		db
			.query<{ name: string }, []>("PRAGMA table_info(audit)")
			.all()
			.map((c) => c.name),
	);
	if (!columns.has("detail"))
		db.exec("ALTER TABLE audit ADD COLUMN detail TEXT");
	if (!columns.has("via")) db.exec("ALTER TABLE audit ADD COLUMN via TEXT");
}

/**
 * An outbox's columns: the agents' hook (`events`) and the people hook (`people_events`). Two
 * migrations create from it, so it never changes: a new column is a new migration.
 */
const OUTBOX_COLUMNS = `
		id TEXT PRIMARY KEY,
		thread_id TEXT NOT NULL,
		thread_seq INTEGER NOT NULL,
		dedupe_key TEXT NOT NULL,
		type TEXT NOT NULL,
		origin TEXT,
		body TEXT NOT NULL,
		status TEXT NOT NULL,
		attempts INTEGER NOT NULL DEFAULT 0,
		next_attempt_at INTEGER NOT NULL,
		last_error TEXT,
		created_at INTEGER NOT NULL,
		delivered_at INTEGER,
		UNIQUE (thread_id, dedupe_key)
	`;

/** Numbered steps: SQL, or code for what SQL cannot do. `user_version` records the last run. */
const MIGRATIONS: (string | ((db: Db) => void))[] = [
	`CREATE TABLE threads (
		thread_id TEXT PRIMARY KEY,
		machine TEXT NOT NULL,
		project_id TEXT NOT NULL,
		title TEXT NOT NULL,
		origin TEXT,
		watched INTEGER NOT NULL DEFAULT 1,
		baseline_ordinal INTEGER NOT NULL DEFAULT 0,
		last_run_id TEXT,
		last_status TEXT,
		last_request_id TEXT,
		thread_seq INTEGER NOT NULL DEFAULT 0,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	) STRICT;
	CREATE TABLE dispatches (
		command_id TEXT PRIMARY KEY,
		thread_id TEXT NOT NULL,
		machine TEXT NOT NULL,
		kind TEXT NOT NULL,
		message_id TEXT NOT NULL,
		request_id TEXT UNIQUE,
		run_id TEXT,
		run_status TEXT,
		queued INTEGER NOT NULL DEFAULT 0,
		origin TEXT,
		payload TEXT NOT NULL,
		created_at INTEGER NOT NULL
	) STRICT;
	CREATE INDEX dispatches_by_thread ON dispatches(thread_id, created_at);
	CREATE TABLE events (${OUTBOX_COLUMNS}) STRICT;
	CREATE INDEX events_pending ON events(status, thread_id, thread_seq);`,
	// /healthz reads the newest delivery error without scanning delivered history.
	"CREATE INDEX events_with_error ON events(created_at) WHERE last_error IS NOT NULL;",
	// One row rewritten by the health probe: can the state still be written?
	"CREATE TABLE health_probe (id INTEGER PRIMARY KEY, at INTEGER NOT NULL) STRICT;",
	"CREATE INDEX threads_watched_by_machine ON threads(machine, watched);",
	// The tracker finds the dispatch behind a run (its origin) by run id or message id.
	"CREATE INDEX dispatches_by_run ON dispatches(run_id); CREATE INDEX dispatches_by_message ON dispatches(message_id);",
	// Idempotency keys of every tool (src/store/operations.ts). Keys t3_dispatch stored as
	// dispatches.request_id move here without arguments (then any arguments match, as before);
	// that column is no longer written.
	`CREATE TABLE operations (
		tool TEXT NOT NULL,
		key TEXT NOT NULL,
		args TEXT,
		thread_id TEXT,
		ref TEXT,
		result TEXT,
		created_at INTEGER NOT NULL,
		PRIMARY KEY (tool, key)
	) STRICT;
	INSERT INTO operations (tool, key, thread_id, ref, created_at)
		SELECT 't3_dispatch', request_id, thread_id, command_id, created_at FROM dispatches
		WHERE request_id IS NOT NULL;`,
	// The project's title and path as last seen, so whether a thread is hidden (its project
	// outside the allowlist) is known while its machine is offline. Older rows take them from
	// their latest event.
	`ALTER TABLE threads ADD COLUMN project_title TEXT;
	ALTER TABLE threads ADD COLUMN project_path TEXT;
	UPDATE threads SET
		project_title = (SELECT json_extract(body, '$.project.title') FROM events e
			WHERE e.thread_id = threads.thread_id ORDER BY thread_seq DESC LIMIT 1),
		project_path = (SELECT json_extract(body, '$.project.path') FROM events e
			WHERE e.thread_id = threads.thread_id ORDER BY thread_seq DESC LIMIT 1);`,
	// Where an operation's thread lives, for threads this connector does not track (t3_manage
	// on a thread made in T3): whether its project is hidden now is judged on these.
	`ALTER TABLE operations ADD COLUMN machine TEXT;
	ALTER TABLE operations ADD COLUMN project_id TEXT;
	ALTER TABLE operations ADD COLUMN project_title TEXT;
	ALTER TABLE operations ADD COLUMN project_path TEXT;`,
	// The delivery worker walks pending rows in due order (`due` in src/store/outbox.ts).
	"CREATE INDEX IF NOT EXISTS events_due ON events(status, next_attempt_at, created_at);",
	maskStoredText,
	// MCP Tasks (src/tasks): a t3_wait or waiting t3_dispatch answered with a task handle.
	`CREATE TABLE IF NOT EXISTS tasks (
		task_id TEXT PRIMARY KEY,
		tool TEXT NOT NULL,
		status TEXT NOT NULL,
		threads TEXT NOT NULL,
		base TEXT,
		deadline_at INTEGER,
		result TEXT,
		status_message TEXT,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		ttl_ms INTEGER NOT NULL
	) STRICT;
	CREATE INDEX IF NOT EXISTS tasks_by_created ON tasks(created_at);`,
	addClients,
	// t3_threads asks which machines have vanished threads on every listing: only those rows.
	"CREATE INDEX IF NOT EXISTS threads_missing_by_machine ON threads(machine) WHERE watched = 0 AND last_status = 'missing';",
	addAuditDetail,
	// Approval links (src/approvals): the links' hashed tokens and the people hook's own outbox,
	// the same shape as `events`, so its delivery never waits behind the agents' hook or
	// the other way round.
	`${LINKS_TABLE_SQL}
	CREATE TABLE IF NOT EXISTS people_events (${OUTBOX_COLUMNS}) STRICT;
	CREATE INDEX IF NOT EXISTS people_events_pending ON people_events(status, thread_id, thread_seq);
	CREATE INDEX IF NOT EXISTS people_events_due ON people_events(status, next_attempt_at, created_at);`,
	// Console sessions (src/console): only the SHA-256 of each session id.
	SESSIONS_TABLE_SQL,
	// Held dispatches (src/store/held-store.ts, CONTRACT.md "One pool").
	HELD_TABLE_SQL,
];

/** The migration that masks old rows (its index: files before it hold `user_version` ≤ this). */
export const MASK_MIGRATION = MIGRATIONS.indexOf(maskStoredText);
/** The migration that gives audit rows `detail` and `via` (files before it hold ≤ this). */
export const AUDIT_DETAIL_MIGRATION = MIGRATIONS.indexOf(addAuditDetail);

export type Db = Database;

/** `PRAGMA application_id` of our files ("t3mc"), so another application's sqlite is told apart. */
export const APPLICATION_ID = 0x74336d63;
/** Tables every file of ours has had (those written before the application id was set too). */
export const OWN_TABLES = ["threads", "dispatches", "events"];

/** Opens (creating folders and file as needed) and migrates the state database. */
export function openDb(path: string): Db {
	if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
	const db = new Database(path, { create: true, strict: true });
	db.exec("PRAGMA journal_mode = WAL");
	db.exec("PRAGMA busy_timeout = 5000");
	db.exec("PRAGMA synchronous = FULL");
	db.exec("PRAGMA foreign_keys = ON");
	migrate(db);
	// From here on no configured secret is bound to a statement unmasked (masking-net.ts).
	maskBoundTexts(db);
	const { application_id } = db.query("PRAGMA application_id").get() as {
		application_id: number;
	};
	if (path !== ":memory:" && application_id !== APPLICATION_ID)
		db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
	return db;
}

function migrate(db: Db): void {
	const current = (
		db.query("PRAGMA user_version").get() as { user_version: number }
	).user_version;
	for (let i = current; i < MIGRATIONS.length; i++) {
		const step = MIGRATIONS[i] as string | ((db: Db) => void);
		// Code steps rewrite text in place: what they replace is zeroed, not left in free space.
		if (typeof step !== "string") db.exec("PRAGMA secure_delete = ON");
		db.transaction(() => {
			if (typeof step === "string") db.exec(step);
			else step(db);
			db.exec(`PRAGMA user_version = ${i + 1}`);
		})();
		if (typeof step !== "string") {
			db.exec("PRAGMA secure_delete = OFF");
			// The old pages leave the file now, and the WAL holding the new ones is emptied.
			db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
		}
	}
}
