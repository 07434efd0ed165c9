/**
 * Bearer tokens, scopes and single-use WebSocket tickets (PROTOCOL.md §2). Revocation takes
 * effect for new HTTP requests and ticket mints at once; sockets already open keep the
 * scopes captured at upgrade (§2.4).
 */
import { newId } from "../engine/rows.ts";

export const READ_SCOPE = "orchestration:read";
export const OPERATE_SCOPE = "orchestration:operate";
const TICKET_TTL_MS = 30_000;
/** Sessions, paired tokens included, last 30 days (captures-v2 http-oauth-token.json). */
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

export interface TokenInfo {
	scopes: string[];
	expiresAt: string;
}

export interface Auth {
	verify(token: string | undefined): TokenInfo | undefined;
	mintTicket(token: string): { ticket: string; expiresAt: string } | undefined;
	/** Single use: a redeemed or expired ticket is gone. */
	redeemTicket(ticket: string): TokenInfo | undefined;
	revoke(token: string): void;
	restore(token: string): void;
	/** A new session token (a pairing exchange); default lifetime 30 days. */
	grant(token: string, scopes: string[], expiresAt?: string): TokenInfo;
}

export function createAuth(
	tokens: { token: string; scopes: string[]; expiresAt?: string }[],
	now: () => number = Date.now,
): Auth {
	const defaultExpiry = () => new Date(now() + SESSION_TTL_MS).toISOString();
	const known = new Map<string, TokenInfo>(
		tokens.map((t) => [
			t.token,
			{ scopes: [...t.scopes], expiresAt: t.expiresAt ?? defaultExpiry() },
		]),
	);
	const revoked = new Set<string>();
	const tickets = new Map<string, { token: string; expires: number }>();

	function verify(token: string | undefined): TokenInfo | undefined {
		if (token === undefined || revoked.has(token)) return undefined;
		const info = known.get(token);
		// An expired session is refused like an unknown one: T3 does not say why.
		if (!info || Date.parse(info.expiresAt) <= now()) return undefined;
		return info;
	}

	return {
		verify,
		mintTicket(token) {
			if (!verify(token)) return undefined;
			const ticket = `sim-ticket-${newId()}`;
			const expires = now() + TICKET_TTL_MS;
			tickets.set(ticket, { token, expires });
			return { ticket, expiresAt: new Date(expires).toISOString() };
		},
		redeemTicket(ticket) {
			const entry = tickets.get(ticket);
			tickets.delete(ticket);
			if (!entry || entry.expires < now()) return undefined;
			// The session row is re-read on redeem, so a revoked token's tickets stop working.
			return verify(entry.token);
		},
		revoke: (token) => void revoked.add(token),
		restore: (token) => void revoked.delete(token),
		grant(token, scopes, expiresAt = defaultExpiry()) {
			const info = { scopes: [...scopes], expiresAt };
			known.set(token, info);
			return info;
		},
	};
}

/** `Authorization: Bearer <token>` → token. */
export function bearerOf(request: Request): string | undefined {
	const header = request.headers.get("authorization");
	const match = header?.match(/^Bearer\s+(.+)$/i);
	return match?.[1]?.trim();
}
