/**
 * Console sessions (CONTRACT.md "Console"): a person signs in once with a client's bearer and
 * keeps a server-side session. Its id is 32 random bytes; the state file keeps only its SHA-256.
 * The CSRF token and the token check are HMACs keyed by the raw id, so the file alone proves
 * nothing about a client's bearer. A session ends when it expires, at sign-out, or as soon as
 * its client is removed or its token changes (checked at every use against the config as it is
 * now); it acts as its client as that client is now.
 */
import { OPEN_CALLER } from "../config/clients.ts";
import type { AppConfig, ClientConfig } from "../config/types.ts";
import { knownCallers } from "../rights/callers.ts";
import type { Db } from "../store/db.ts";

export const SESSION_COOKIE = "t3mcp_console";

/** A session in use: its client as the config has it now. */
export interface Session {
	/** The raw id (from the cookie): keys the HMACs, never stored. */
	id: string;
	/** SHA-256 of the id, hex: how the state file and the live streams name it. */
	idHash: string;
	client: ClientConfig;
	csrf: string;
	expiresAt: number;
}

// Bun's hashers, not node:crypto: its JS layer costs memory and start-up (events/signature.ts).
const hmac = (key: string, text: string) =>
	new Bun.CryptoHasher("sha256", key).update(text).digest("base64url");

export const sessionHash = (id: string): string =>
	new Bun.CryptoHasher("sha256").update(id).digest("hex");

const tokenCheck = (id: string, client: ClientConfig) =>
	hmac(id, `token\u0000${client.name}\u0000${client.token ?? ""}`);

/** The CSRF token of a session: only a holder of the cookie can know it. */
export const csrfOf = (id: string): string => hmac(id, "csrf");

/** Whether two strings are equal, in time independent of where they differ. */
export function sameText(a: string, b: string): boolean {
	if (a.length !== b.length) return false;
	let diff = 0;
	for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
	return diff === 0;
}

/** The client a session's name stands for now: a configured client, else the open caller. */
export function currentClient(
	config: AppConfig,
	name: string,
): ClientConfig | undefined {
	const callers = knownCallers(config);
	if (callers === undefined)
		return name === OPEN_CALLER.name ? OPEN_CALLER : undefined;
	return callers.find((c) => c.name === name);
}

export function createSessionStore(db: Db, now: () => number) {
	const insert = db.query(
		"INSERT INTO console_sessions (id_hash, client, token_check, created_at, expires_at) VALUES ($hash, $client, $check, $now, $expires)",
	);
	const byHash = db.query<
		{ client: string; token_check: string; expires_at: number },
		{ hash: string }
	>(
		"SELECT client, token_check, expires_at FROM console_sessions WHERE id_hash = $hash",
	);
	const remove = db.query("DELETE FROM console_sessions WHERE id_hash = $hash");
	const prune = db.query(
		"DELETE FROM console_sessions WHERE expires_at <= $now",
	);
	let prunedAt = 0;
	return {
		/** A new session for the client; returns its raw id (for the cookie only). */
		create(client: ClientConfig, hours: number): Session {
			const id = Buffer.from(
				crypto.getRandomValues(new Uint8Array(32)),
			).toString("base64url");
			const at = now();
			if (at - prunedAt > 60_000) {
				prunedAt = at;
				prune.run({ now: at });
			}
			const expiresAt = at + hours * 3_600_000;
			insert.run({
				hash: sessionHash(id),
				client: client.name,
				check: tokenCheck(id, client),
				now: at,
				expires: expiresAt,
			});
			return {
				id,
				idHash: sessionHash(id),
				client,
				csrf: csrfOf(id),
				expiresAt,
			};
		},
		/**
		 * The session with this raw id, its client as configured now; undefined when there is none
		 * or it ended (expired, client removed, token changed: the row is deleted then).
		 */
		find(id: string | undefined, config: AppConfig): Session | undefined {
			if (id === undefined || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
			const hash = sessionHash(id);
			const row = byHash.get({ hash });
			if (!row) return undefined;
			const client = currentClient(config, row.client);
			if (
				row.expires_at <= now() ||
				!client ||
				!sameText(tokenCheck(id, client), row.token_check)
			) {
				remove.run({ hash });
				return undefined;
			}
			return {
				id,
				idHash: hash,
				client,
				csrf: csrfOf(id),
				expiresAt: row.expires_at,
			};
		},
		/** Whether the session (by raw id) still stands for this client as configured now. */
		stillValid(session: Session, config: AppConfig): boolean {
			const client = currentClient(config, session.client.name);
			if (client === undefined || session.expiresAt <= now()) return false;
			// A reload keeps an unchanged client's object: no HMAC needed at every live message.
			if (client === session.client) return true;
			return sameText(
				tokenCheck(session.id, client),
				tokenCheck(session.id, session.client),
			);
		},

		end(id: string): void {
			remove.run({ hash: sessionHash(id) });
		},
	};
}

export type SessionStore = ReturnType<typeof createSessionStore>;
