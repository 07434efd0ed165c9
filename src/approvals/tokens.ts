/**
 * Approval link tokens (CONTRACT.md "Approval links"): 32 random bytes, base64url, naming one
 * request of one thread. Only the SHA-256 is kept in the state file; the raw token lives in the
 * pending outbox row that carries the link, and nowhere else.
 */

/** SHA-256, hex, with Bun's hasher (the server never loads node:crypto: its JS layer is heavy). */
export function sha256Hex(text: string): string {
	return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

/** A new link token: 32 random bytes as 43 base64url characters. */
export function newLinkToken(): string {
	return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString(
		"base64url",
	);
}

/** What the state file keeps of a token: its SHA-256, hex. */
export function tokenHash(token: string): string {
	return sha256Hex(token);
}

/** Whether a path segment can be a token at all (checked before any hash or lookup). */
export function looksLikeToken(segment: string): boolean {
	return /^[A-Za-z0-9_-]{43}$/.test(segment);
}

/** The link a person opens: `<public_url>/a/<token>`. */
export function linkUrl(publicUrl: string, token: string): string {
	return `${publicUrl.replace(/\/+$/, "")}/a/${token}`;
}
