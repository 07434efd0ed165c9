/**
 * Pieces of 5 or more characters of a secret in a text (masking may leave at most 4): the
 * first one found and what surrounds it.
 */
export function findSecretPiece(
	text: string,
	secrets: string[],
): { piece: string; context: string } | undefined {
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
