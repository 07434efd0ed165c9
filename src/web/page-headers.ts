/**
 * The headers of every page this server shows to people (the console, approval links): no
 * framing, scripts and styles from the server only (never inline), no sniffing, no referrer,
 * never cached (CONTRACT.md "Console"). Assets (CSS, the console's script) get their own.
 */

/** `Content-Security-Policy` of every page: everything from this server, nothing framed. */
export const PAGE_CSP = "default-src 'self'; frame-ancestors 'none'";

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
	"content-type": "text/html; charset=utf-8",
	"content-security-policy": PAGE_CSP,
	"x-content-type-options": "nosniff",
	// A browser then sends `Origin: null` with a same-origin form POST: web/same-origin.ts
	// accepts that one only with `Sec-Fetch-Site: same-origin`.
	"referrer-policy": "no-referrer",
	"cache-control": "no-store",
	"x-robots-tag": "noindex, nofollow",
};

/** Headers of a static asset served from a TypeScript string module (CSS, script). */
export function assetHeaders(contentType: string): Record<string, string> {
	return {
		"content-type": contentType,
		"x-content-type-options": "nosniff",
		"cache-control": "public, max-age=3600",
	};
}
