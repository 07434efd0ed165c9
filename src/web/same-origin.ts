/**
 * The Origin rule of a person's POST (CONTRACT.md "Console", "Approval links"): a present
 * `Origin` must be `public_url`'s origin or the request's own. Under `Referrer-Policy:
 * no-referrer` a browser sends `Origin: null` with a same-origin form POST; that one is taken for
 * the request's own only when the browser also says `Sec-Fetch-Site: same-origin` (a page of
 * another site, sandboxed or not, sends `cross-site`). The CSRF token is checked besides.
 */

/** `scheme://host[:port]` of a URL, or undefined (not a URL, or an opaque origin). */
export function originOf(url: string | undefined): string | undefined {
	if (url === undefined) return undefined;
	try {
		const origin = new URL(url).origin;
		return origin === "null" ? undefined : origin;
	} catch {
		return undefined;
	}
}

/** Whether the request's `Origin` (if any) may send a person's POST here. */
export function originAllowed(
	request: Request,
	publicUrl: string | undefined,
): boolean {
	const origin = request.headers.get("origin");
	if (origin === null) return true;
	if (origin.trim() === "null")
		return request.headers.get("sec-fetch-site") === "same-origin";
	const given = originOf(origin);
	if (given === undefined) return false;
	return given === originOf(publicUrl) || given === originOf(request.url);
}
