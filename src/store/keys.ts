/**
 * Keys the connector makes for itself, kept in the state file so they outlive a restart (a
 * cursor handed out before it still opens after). Made once, on first use.
 */
import type { Db } from "./db.ts";

/** The key named `name`, made (32 random bytes) and stored the first time it is asked for. */
export function ownKey(db: Db, name: string): Uint8Array {
	// Made here rather than as a numbered migration: it is only ever added to, never migrated.
	db.exec(
		"CREATE TABLE IF NOT EXISTS keys (name TEXT PRIMARY KEY, value BLOB NOT NULL) STRICT",
	);
	db.query("INSERT OR IGNORE INTO keys (name, value) VALUES (?, ?)").run(
		name,
		// Web Crypto, not node:crypto (its JS layer costs memory and start-up time).
		crypto.getRandomValues(new Uint8Array(32)),
	);
	const row = db.query("SELECT value FROM keys WHERE name = ?").get(name) as {
		value: Uint8Array;
	};
	return row.value;
}
