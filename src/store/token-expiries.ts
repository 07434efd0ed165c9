/**
 * The expiry T3 last reported for each machine's token, kept in the state file so that a token
 * found dead after a restart is still reported as expired ("token expired at …") rather than
 * merely rejected. Keyed by a SHA-256 fingerprint: the token itself is never stored.
 */
import type { Db } from "./db.ts";

export interface TokenExpiryStore {
	/** The expiry recorded for this machine's token, or null (unknown, or another token). */
	get(machine: string, token: string): string | null;
	set(machine: string, token: string, expiresAt: string | null): void;
}

function fingerprint(token: string): string {
	return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

export function createTokenExpiryStore(db: Db): TokenExpiryStore {
	// Made here rather than as a numbered migration: one row per machine, only ever replaced.
	db.exec(
		"CREATE TABLE IF NOT EXISTS token_expiries (machine TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, expires_at TEXT NOT NULL) STRICT",
	);
	const read = db.query<{ fingerprint: string; expires_at: string }, [string]>(
		"SELECT fingerprint, expires_at FROM token_expiries WHERE machine = ?",
	);
	const write = db.query(
		"INSERT INTO token_expiries (machine, fingerprint, expires_at) VALUES ($m, $f, $e) ON CONFLICT (machine) DO UPDATE SET fingerprint = $f, expires_at = $e",
	);
	const remove = db.query("DELETE FROM token_expiries WHERE machine = ?");
	return {
		get(machine, token) {
			const row = read.get(machine);
			return row && row.fingerprint === fingerprint(token)
				? row.expires_at
				: null;
		},
		set(machine, token, expiresAt) {
			const f = fingerprint(token);
			const row = read.get(machine);
			if (expiresAt === null) {
				if (row) remove.run(machine);
				return;
			}
			if (row?.fingerprint === f && row.expires_at === expiresAt) return;
			write.run({ m: machine, f, e: expiresAt });
		},
	};
}
