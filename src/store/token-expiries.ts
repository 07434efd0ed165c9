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
	/**
	 * Writes not yet committed, by machine (null: delete). Every machine reports its expiry at
	 * each connect; 500 of them connecting were 500 commits with a sync each. They share one
	 * commit after the current task instead; losing one to a crash only loses a better wording.
	 */
	const pending = new Map<string, { f: string; e: string } | null>();
	const flush = db.transaction(() => {
		for (const [m, row] of pending)
			if (row === null) remove.run(m);
			else write.run({ m, f: row.f, e: row.e });
		pending.clear();
	});
	const current = (machine: string) => {
		if (pending.has(machine)) {
			const row = pending.get(machine);
			return row ? { fingerprint: row.f, expires_at: row.e } : null;
		}
		return read.get(machine);
	};
	return {
		get(machine, token) {
			const row = current(machine);
			return row && row.fingerprint === fingerprint(token)
				? row.expires_at
				: null;
		},
		set(machine, token, expiresAt) {
			const f = fingerprint(token);
			const row = current(machine);
			if (expiresAt === null) {
				if (!row) return;
			} else if (row?.fingerprint === f && row.expires_at === expiresAt) return;
			if (pending.size === 0)
				queueMicrotask(() => {
					try {
						flush();
					} catch {
						// The state file cannot be written: the expiry stays known in memory only.
					}
				});
			pending.set(machine, expiresAt === null ? null : { f, e: expiresAt });
		},
	};
}
