/**
 * Pieces of 5 or more characters of a secret in a text (masking may leave at most 4): the
 * first one found and what surrounds it.
 */
export function findSecretPiece(
	raw: string,
	secrets: string[],
): { piece: string; context: string } | undefined {
	const text = openCursors(raw);
	for (const secret of secrets)
		for (let i = 0; i + 5 <= secret.length; i++) {
			const piece = secret.slice(i, i + 5);
			const at = text.indexOf(piece);
			if (at !== -1)
				return {
					piece,
					context: text.slice(Math.max(0, at - 80), at + 40),
				};
		}
	return undefined;
}

/**
 * Page cursors (`payload.signature`, threads/read/cursor.ts) are base64url of JSON holding
 * random ids, which by chance spell pieces of a base64 secret; their payload is checked as
 * the JSON it decodes to, and the signature (an HMAC, no input text in it) is dropped.
 */
const CURSOR = /([A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;

export function openCursors(text: string): string {
	return text.replace(CURSOR, (whole, payload: string) => {
		try {
			const body = Buffer.from(payload, "base64url").toString("utf8");
			JSON.parse(body);
			return `cursor(${body})`;
		} catch {
			return whole;
		}
	});
}

/** Throws naming the piece, where it was found and what surrounds it. */
export function expectNoSecretPiece(
	text: string,
	secrets: string[],
	where = "",
): void {
	const found = findSecretPiece(text, secrets);
	if (found)
		throw new Error(
			`${where ? `${where}: ` : ""}a piece of a secret (${found.piece}) leaked: …${found.context}…`,
		);
}
