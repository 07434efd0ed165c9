/**
 * When a T3 token stops working, as `/api/auth/session` says (`expiresAt`; paired tokens last
 * 30 days with no refresh), and the words for one that did.
 */
import type { AuthSession } from "../model.ts";

/** The session's `expiresAt` as an ISO time, or null when T3 does not say (or says nonsense). */
export function sessionExpiry(session: AuthSession): string | null {
	const raw = session.expiresAt;
	if (typeof raw !== "string") return null;
	const ms = Date.parse(raw);
	return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** What to do about a token that stopped (or is about to stop) working. */
export const MINT_NEW_TOKEN =
	"mint a new one (`t3code-mcp pair`, or `t3 auth session issue`)";

/** The same, naming the machine's token file when it has one. */
export function mintNewToken(tokenFile: string | null): string {
	return `${MINT_NEW_TOKEN}${tokenFile !== null ? ` into ${tokenFile}` : ""}`;
}

/** What to do about an expired token: the reason `unauthorized` carries. */
export function expiredTokenReason(expiresAt: string): string {
	return `token expired at ${expiresAt}; ${MINT_NEW_TOKEN}`;
}
