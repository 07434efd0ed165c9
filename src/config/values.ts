/**
 * Parsers for the value kinds shared by the file schema and the environment variables: host
 * names, http(s) origins and URLs, comma lists, webhook secrets. Each returns the normalised
 * value, or undefined when the text is not acceptable; callers word the message.
 */

const HOST_NAME = /^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$/;
const IPV6 = /^[0-9a-f:.]+(%[0-9a-z_.-]+)?$/;

/**
 * A host name, IPv4 or IPv6 address without port, lowercased. IPv6 may be bracketed ("[::1]")
 * or bare; the result is bare ("::1"). `allowAny` also accepts the wildcard addresses a server
 * listens on ("0.0.0.0", "::"), which are fine to listen on but meaningless as a Host.
 */
export function parseHostName(
	text: string,
	allowAny: boolean,
): string | undefined {
	let s = text.trim().toLowerCase();
	if (s === "" || s !== text.toLowerCase()) return undefined;
	if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
	else if (s.includes(":") && s.indexOf(":") === s.lastIndexOf(":"))
		return undefined; // "name:port"
	if (s.includes(":")) {
		if (!IPV6.test(s)) return undefined;
		return !allowAny && s === "::" ? undefined : s;
	}
	if (!HOST_NAME.test(s)) return undefined;
	return !allowAny && s === "0.0.0.0" ? undefined : s;
}

function parseUrl(text: string): URL | undefined {
	if (text !== text.trim()) return undefined;
	try {
		const url = new URL(text);
		if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
		if (url.hostname === "") return undefined;
		return url;
	} catch {
		return undefined;
	}
}

/**
 * An http(s) origin ("http://100.64.0.5:3773"): no credentials, path, query or fragment; one
 * trailing "/" is tolerated. Returns `URL.origin` (lowercased host, default port dropped).
 */
export function parseHttpOrigin(text: string): string | undefined {
	const url = parseUrl(text);
	if (url === undefined) return undefined;
	if (url.username !== "" || url.password !== "") return undefined;
	// URL drops an empty "?" or "#", so look at the text too.
	if (url.pathname !== "/" || /[?#]/.test(text)) return undefined;
	return url.origin;
}

/** Any http(s) URL (paths and queries allowed) without userinfo, returned as written. */
export function parseHttpUrl(text: string): string | undefined {
	const url = parseUrl(text);
	if (url === undefined || url.username !== "" || url.password !== "")
		return undefined;
	return text;
}

/**
 * Whether the text is a URL carrying `user[:password]@` (a credential in plain sight): such
 * URLs are refused with a message of their own that never repeats the value.
 */
export function hasUserinfo(text: string): boolean {
	try {
		const url = new URL(text.trim());
		return url.username !== "" || url.password !== "";
	} catch {
		return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(text.trim());
	}
}

/** "a, b,,c " → ["a", "b", "c"]. */
export function parseCommaList(text: string): string[] {
	return text
		.split(",")
		.map((item) => item.trim())
		.filter((item) => item !== "");
}

const BASE64 =
	/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A Standard Webhooks signing secret: "whsec_" then non-empty base64. */
export function isWebhookSecret(text: string): boolean {
	if (!text.startsWith("whsec_")) return false;
	const b64 = text.slice("whsec_".length);
	return b64 !== "" && BASE64.test(b64);
}

/** A base-10 integer within [min, max], or undefined ("08" is fine, "1e3", "1.0", " 1" are not). */
export function parseIntIn(
	text: string,
	min: number,
	max: number,
): number | undefined {
	if (!/^\d{1,9}$/.test(text)) return undefined;
	const n = Number(text);
	return n >= min && n <= max ? n : undefined;
}
