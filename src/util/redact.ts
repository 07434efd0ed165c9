/**
 * The one place text from outside (a T3 server's, a proxy's or a webhook receiver's error
 * body or reason) is made safe to show: every configured secret and any credential-looking
 * value is masked, and the text is capped (CONTRACT.md "HTTP"). Secrets are registered once per
 * process from the configuration: they come from the process environment, and text from
 * anywhere in the process (a log line, a T3 error deep in the protocol client) is checked
 * against all of them without threading them through every module.
 */
import type { AppConfig } from "../config/types.ts";

export const MASK = "[redacted]";
/** Shorter values are not masked: too likely to occur by chance in ordinary text. */
export const MIN_SECRET_LENGTH = 8;
/** Outside text longer than this is cut (an error page can be megabytes). */
export const MAX_OUTSIDE_TEXT = 500;

const secrets = new Set<string>();
/** Longest first, so a secret containing another is masked whole. */
let ordered: string[] = [];

/**
 * Adds values to mask from now on (machine tokens, `T3CODE_MCP_TOKEN`, hook token and secret).
 * Values under 8 characters are ignored. A `whsec_` secret is also masked without its prefix
 * (the key itself), and every value also URL-encoded.
 */
export function registerSecrets(values: Iterable<string | undefined>): void {
	let changed = false;
	const add = (value: string) => {
		if (value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
		secrets.add(value);
		changed = true;
	};
	for (const value of values) {
		if (value === undefined) continue;
		add(value);
		if (value.startsWith("whsec_")) add(value.slice("whsec_".length));
		add(encodeURIComponent(value));
	}
	if (changed) ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/**
 * Registers every secret a configuration holds: each machine's token, `T3CODE_MCP_TOKEN`, the
 * hook token and secret, and the hook URL beyond its origin (its path may hold a secret).
 */
export function registerConfigSecrets(config: AppConfig): void {
	const { server } = config;
	let hookRest: string | undefined;
	try {
		if (server.hookUrl !== undefined) {
			const url = new URL(server.hookUrl);
			hookRest = `${url.pathname}${url.search}${url.hash}`;
		}
	} catch {
		// Not a URL: the whole value is registered below.
	}
	registerSecrets([
		...config.machines.map((m) => m.token),
		server.token,
		server.hookToken,
		server.hookSecret,
		server.hookUrl,
		hookRest,
	]);
}

/** Header names whose value is a credential: `Authorization: Bearer x`, `Cookie: s=x`. */
const HEADER_VALUE =
	/(\b(?:proxy-)?authorization|\bcookie|\bset-cookie|\bx-api-key)(["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token|digest)\s+)?[^\s"',;}\]]+/gi;
/** Names of values that are credentials (`access_token`, `password`, `wsTicket`, `api_key`, …). */
const CREDENTIAL_KEY =
	"[a-z_-]*(?:token|secret|password|passwd|api[_-]?key|credentials?|ticket)";
/**
 * `key=value` (queries, forms) and quoted `"key": "value"` (JSON). An unquoted `key: value` is
 * prose ("no token: environment variable … is not set") and is left alone.
 */
const KEYED_VALUE = new RegExp(
	`(\\b${CREDENTIAL_KEY}\\b["']?\\s*=\\s*["']?|\\b${CREDENTIAL_KEY}["']\\s*:\\s*["'])[^\\s"'&,;}\\]]+`,
	"gi",
);
/** A bare `Bearer x` / `Basic x` anywhere. */
const SCHEME_VALUE = /\b(bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})/gi;
/** `scheme://user:password@host`. */
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;

/** Masks every registered secret and credential-looking value; the length is not changed otherwise. */
export function maskSecrets(text: string): string {
	let out = text;
	for (const secret of ordered)
		if (out.includes(secret)) out = out.replaceAll(secret, MASK);
	return out
		.replace(
			HEADER_VALUE,
			(_m, name: string, sep: string) => `${name}${sep}${MASK}`,
		)
		.replace(KEYED_VALUE, (_m, key: string) => `${key}${MASK}`)
		.replace(SCHEME_VALUE, (_m, scheme: string) => `${scheme} ${MASK}`)
		.replace(USERINFO, (_m, scheme: string) => `${scheme}${MASK}@`);
}

/**
 * Outside text as it may be shown or logged: secrets masked, then capped at 500 characters.
 * Masking comes first, so a secret cut by the cap cannot leave its beginning behind.
 */
export function redact(text: string): string {
	const masked = maskSecrets(text);
	if (masked.length <= MAX_OUTSIDE_TEXT) return masked;
	return `${Array.from(masked.slice(0, MAX_OUTSIDE_TEXT)).slice(0, -1).join("")}…`;
}

/**
 * A URL as it may be shown: its origin only (the path or query of a webhook URL often holds a
 * secret, and userinfo always does).
 */
export function urlOrigin(url: string): string {
	try {
		const origin = new URL(url).origin;
		return origin === "null" ? "(invalid URL)" : origin;
	} catch {
		return "(invalid URL)";
	}
}

/** Clears the registry (unit tests only). */
export function clearSecretsForTest(): void {
	secrets.clear();
	ordered = [];
}
