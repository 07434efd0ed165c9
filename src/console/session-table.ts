/**
 * The console's sessions table (src/console/sessions.ts), created by a migration in
 * store/db.ts: one row per session, keyed by the SHA-256 of its id (never the id); the client's
 * name and an HMAC keyed by the raw id that tells whether that client's token changed since.
 */
export const SESSIONS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS console_sessions (
	id_hash TEXT PRIMARY KEY,
	client TEXT NOT NULL,
	token_check TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS console_sessions_by_expiry ON console_sessions(expires_at);`;
