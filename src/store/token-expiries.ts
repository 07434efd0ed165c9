/**
 * The expiry T3 last reported for each machine's token, kept in the state file so that a token
 * found dead after a restart is still reported as expired ("token expired at …") rather than
 * merely rejected. Keyed by a SHA-256 fingerprint: the token itself is never stored.
 *
 * Written in batches: a fleet's first start (or a rotation of every token) reports an expiry per
 * machine as each connects, and one committed write each was one fsync each on the event loop
 * (~540 ms of a 500-machine first start). A change waits up to `batchMs` for the others, and
 * `flush` writes what waits at shutdown. A crash within `batchMs` of a new expiry loses it until
 * the next connect reports it again: a token found dead at that next start is then "rejected",
 * not "expired at …".
 */

import { unrefTimer } from "../util/clock.ts";
import type { Db } from "./db.ts";

export interface TokenExpiryStore {
	/** The expiry recorded for this machine's token, or null (unknown, or another token). */
	get(machine: string, token: string): string | null;
	set(machine: string, token: string, expiresAt: string | null): void;
	/** Writes every change still waiting (before the state file closes). */
	flush(): void;
}

export interface TokenExpiryOptions {
	/** How long a change waits for others before they are written together (default 250 ms). */
	batchMs?: number;
	/** Runs `fn` after `ms`; returns a cancel function (default an unref'd timer). */
	setTimer?: (fn: () => void, ms: number) => () => void;
	/** A batch that could not be written (the rows stay as they were). */
	onError?: (error: unknown) => void;
}

interface Entry {
	fingerprint: string;
	/** Null: the machine's row is to be removed. */
	expiresAt: string | null;
}

function fingerprint(token: string): string {
	return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

export function createTokenExpiryStore(
	db: Db,
	options: TokenExpiryOptions = {},
): TokenExpiryStore {
	const batchMs = options.batchMs ?? 250;
	const setTimer = options.setTimer ?? unrefTimer;
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
	/** Changes not written yet, by machine: what `get` answers from first. */
	const waiting = new Map<string, Entry>();
	let cancel: (() => void) | undefined;

	const current = (machine: string): Entry | null => {
		const entry = waiting.get(machine);
		if (entry) return entry;
		const row = read.get(machine);
		return row
			? { fingerprint: row.fingerprint, expiresAt: row.expires_at }
			: null;
	};

	const flush = () => {
		cancel?.();
		cancel = undefined;
		if (waiting.size === 0) return;
		const batch = [...waiting];
		waiting.clear();
		try {
			db.transaction(() => {
				for (const [m, { fingerprint: f, expiresAt: e }] of batch)
					if (e === null) remove.run(m);
					else write.run({ m, f, e });
			})();
		} catch (error) {
			options.onError?.(error);
		}
	};

	return {
		get(machine, token) {
			const entry = current(machine);
			return entry?.expiresAt != null &&
				entry.fingerprint === fingerprint(token)
				? entry.expiresAt
				: null;
		},
		set(machine, token, expiresAt) {
			const f = fingerprint(token);
			const entry = current(machine);
			if (
				expiresAt === null
					? entry?.expiresAt == null
					: entry?.fingerprint === f && entry.expiresAt === expiresAt
			)
				return;
			waiting.set(machine, { fingerprint: f, expiresAt });
			cancel ??= setTimer(flush, batchMs);
		},
		flush,
	};
}
