/**
 * Request guards for the HTTP app (CONTRACT.md "HTTP"): browser Origin allow-list, Host check
 * against DNS rebinding, and the optional static bearer token. Hono middleware on web-standard
 * Request/Response only, so tests call `app.request(…)` without a port.
 */
import type { MiddlewareHandler } from "hono";
import { hostName, isLoopback } from "./host.ts";

/** `scheme://host[:port]`, lowercased and without the default port; undefined when not a URL. */
function normaliseOrigin(origin: string): string | undefined {
	try {
		const url = new URL(origin);
		return url.origin === "null" ? undefined : url.origin;
	} catch {
		return undefined;
	}
}

/** `public_url`'s origin, or undefined. */
function publicOrigin(url: string | undefined): string | undefined {
	return url === undefined ? undefined : normaliseOrigin(url);
}

/** `public_url`'s host name (no port), as `hostName` gives it, or undefined. */
function publicHost(url: string | undefined): string | undefined {
	if (url === undefined) return undefined;
	try {
		return hostName(new URL(url).host);
	} catch {
		return undefined;
	}
}

export interface OriginGuardOptions {
	/** The address the server listens on (`T3CODE_MCP_HOST`). */
	listenHost: string;
	/** Accepted origins (`T3CODE_MCP_ALLOWED_ORIGINS`). */
	allowedOrigins: string[];
	/**
	 * `[server] public_url`, read at each request (a reload may change it): its origin is
	 * accepted too, since a person's browser sends it (CONTRACT.md "Approval links").
	 */
	publicUrl?: () => string | undefined;
}

/** Whether `origin` is an http(s) origin whose host is a loopback name, any port. */
function isLoopbackOrigin(origin: string): boolean {
	try {
		const url = new URL(origin);
		if (url.protocol !== "http:" && url.protocol !== "https:") return false;
		const name = hostName(url.host);
		return name !== undefined && isLoopback(name);
	} catch {
		return false;
	}
}

/**
 * Refuses (403) a request carrying an `Origin` header that is not in `allowedOrigins`. Requests
 * without `Origin` (CLI clients, gateways) pass: only browsers send it, and a page on another
 * site must not reach a server on the user's loopback or tailnet. A server listening on
 * loopback also accepts loopback origins (`http://localhost:5173`, any port): such a page
 * already runs on this host, and browser MCP clients there need it (MCP conformance scenario
 * `dns-rebinding-protection`). No CORS headers are added for them.
 *
 * @example app.use(originGuard({ listenHost: "127.0.0.1", allowedOrigins: ["https://claude.ai"] }))
 */
export const originGuard = ({
	listenHost,
	allowedOrigins,
	publicUrl,
}: OriginGuardOptions): MiddlewareHandler => {
	const allowed = new Set(
		allowedOrigins.map((o) => normaliseOrigin(o) ?? o.toLowerCase()),
	);
	const loopbackListen = isLoopback(listenHost);
	return async function originGuard(c, next) {
		const origin = c.req.header("origin");
		// A page of this server under `Referrer-Policy: no-referrer` posts its forms with
		// `Origin: null`; the browser says where from (`Sec-Fetch-Site`), and a page of another
		// site (sandboxed or not) says `cross-site` (src/web/same-origin.ts).
		const ownPage =
			origin?.trim() === "null" &&
			c.req.header("sec-fetch-site") === "same-origin";
		if (origin !== undefined && !ownPage) {
			const key = normaliseOrigin(origin) ?? origin.trim().toLowerCase();
			const ok =
				allowed.has(key) ||
				(loopbackListen && isLoopbackOrigin(origin)) ||
				publicOrigin(publicUrl?.()) === key;
			if (!ok) return c.json({ error: "origin not allowed", origin }, 403);
		}
		await next();
	};
};

export interface HostGuardOptions {
	/** The address the server listens on (`T3CODE_MCP_HOST`). */
	listenHost: string;
	/** Extra accepted `Host` names (`T3CODE_MCP_ALLOWED_HOSTS`), without port. */
	allowedHosts: string[];
	/**
	 * `[server] public_url`, read at each request: its host is accepted too. It does not turn
	 * the check on where it is off (a container on 0.0.0.0 keeps answering its service name).
	 */
	publicUrl?: () => string | undefined;
}

/**
 * DNS-rebinding protection. Listening on loopback, `Host` must be a loopback name or listed in
 * `allowedHosts`; on any other address it is checked only when `allowedHosts` is non-empty
 * (then loopback names are still accepted). So a container on 0.0.0.0 answers
 * `Host: t3code-mcp:8000` with no setting. Refusal: 403 `{error: "host not allowed", host}`.
 *
 * @example app.use(hostGuard({ listenHost: "127.0.0.1", allowedHosts: [] }))
 */
export const hostGuard = ({
	listenHost,
	allowedHosts,
	publicUrl,
}: HostGuardOptions): MiddlewareHandler => {
	const allowed = new Set(
		allowedHosts.map((h) => hostName(h) ?? h.toLowerCase()),
	);
	const check = isLoopback(listenHost) || allowed.size > 0;
	return async function hostGuard(c, next) {
		if (check) {
			// Bun builds `Request.url` from the Host header; fall back to it when the header is absent.
			const host = c.req.header("host") ?? new URL(c.req.url).host;
			const name = hostName(host);
			if (
				name === undefined ||
				!(
					isLoopback(name) ||
					allowed.has(name) ||
					name === publicHost(publicUrl?.())
				)
			) {
				return c.json({ error: "host not allowed", host }, 403);
			}
		}
		await next();
	};
};
