/**
 * Approval link tokens (CONTRACT.md "Approval links"): 32 random bytes, base64url, naming one
 * request of one thread. Only the SHA-256 is kept in the state file; the raw token lives in the
 * pending outbox row that carries the link, and nowhere else.
 */
import { createHash, randomBytes } from "node:crypto";

/** A new link token: 32 random bytes as 43 base64url characters. */
export function newLinkToken(): string {
	return randomBytes(32).toString("base64url");
}

/** What the state file keeps of a token: its SHA-256, hex. */
export function tokenHash(token: string): string {
	return createHash("sha256").update(token).digest("hex");
}

/** Whether a path segment can be a token at all (checked before any hash or lookup). */
export function looksLikeToken(segment: string): boolean {
	return /^[A-Za-z0-9_-]{43}$/.test(segment);
}

/** The link a person opens: `<public_url>/a/<token>`. */
export function linkUrl(publicUrl: string, token: string): string {
	return `${publicUrl.replace(/\/+$/, "")}/a/${token}`;
}
