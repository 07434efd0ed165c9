/**
 * A T3 pairing link, `<origin>[/<base path>]/pair#token=<credential>` (RELEASED-0.1.md §2):
 * where the server is and the single-use credential. The credential sits in the hash so that
 * it never reaches a server log; nothing here ever puts it (or the link) in a message.
 */

export interface PairingLink {
	/** Origin plus base path (without `/pair`), no trailing slash. */
	base: string;
	origin: string;
	/** The path between the origin and `/pair`, "" when none. */
	basePath: string;
	credential: string;
}

/** The link, or why it is not one (the text never repeats the link). */
export function parsePairingLink(text: string): PairingLink | string {
	let url: URL;
	try {
		url = new URL(text.trim());
	} catch {
		return "the pairing link is not a URL; copy the whole link T3 printed (…/pair#token=…)";
	}
	if (url.protocol !== "http:" && url.protocol !== "https:")
		return "the pairing link must be an http(s) URL (…/pair#token=…)";
	if (url.username !== "" || url.password !== "")
		return "the pairing link must not carry user:password@";
	const credential =
		new URLSearchParams(url.hash.slice(1)).get("token") ??
		url.searchParams.get("token");
	if (credential === null || credential.trim() === "")
		return "the pairing link has no credential (#token=…); copy the whole link T3 printed, hash included";
	const basePath = url.pathname.replace(/\/+$/, "").replace(/\/pair$/, "");
	return {
		base: `${url.origin}${basePath}`,
		origin: url.origin,
		basePath,
		credential: credential.trim(),
	};
}

/** A config machine name from T3's label or the host ("Theo's Mac" → "theo-s-mac"). */
export function machineNameFrom(
	label: string | undefined,
	host: string,
): string {
	const slug = (s: string) =>
		s
			.toLowerCase()
			.replace(/[^a-z0-9_-]+/g, "-")
			.replace(/^[-_]+|-+$/g, "")
			.slice(0, 64);
	return slug(label ?? "") || slug(host) || "t3";
}
