/**
 * The one place text from outside is made safe to show (CONTRACT.md "HTTP"). Every text a T3
 * server sends (titles, messages, questions, tool titles, notices, diffs, error bodies), and a
 * proxy's or webhook receiver's reply, has every configured secret masked before it is shown,
 * stored or sent. Error bodies and reasons also get credential-looking values masked
 * (`maskCredentials`, `redact`); messages and diffs do not, since there that pattern is
 * ordinary code.
 *
 * Secrets are registered once per process from the configuration: they come from the process
 * environment, and text from anywhere in the process is checked against all of them without
 * threading them through every module. Masking comes before every cut, and a T3 text cut or
 * capped here that starts or ends with a piece of a secret (cut by T3, or a message still
 * streaming) has that piece masked too, so no more than 4 characters of a secret survive.
 * Masking twice changes nothing.
 */
import type { AppConfig } from "../config/types.ts";
import { createGramIndex, type GramIndex } from "./gram-index.ts";

export const MASK = "[redacted]";
/** Shorter values are not masked: too likely to occur by chance in ordinary text. */
export const MIN_SECRET_LENGTH = 8;
/** Outside error text longer than this is cut (an error page can be megabytes). */
export const MAX_OUTSIDE_TEXT = 500;
/** A hook URL path segment this long is taken for a secret (shorter ones are route names). */
export const MIN_PATH_SECRET_LENGTH = 16;
/** The shortest piece of a secret masked at a text's start or end (4 characters may show). */
const MIN_PIECE = 5;

const secrets = new Set<string>();
/** Longest first, so a secret containing another is masked whole. */
let ordered: string[] = [];
/**
 * The first and last 5 characters of each secret as it appears inside a JSON string: every
 * occurrence, and every piece a cut may leave, holds one of them.
 */
let jsonPieces: string[] = [];
let longest = 0;
/** Position in `ordered`: candidates are tried in the order the full loop would try them. */
let rank = new Map<string, number>();
// One pass over a text finds the few secrets worth trying (gram-index.ts), so the cost of a
// masked text does not grow with the number of machines.
let byStart: GramIndex<string> = createGramIndex(MIN_SECRET_LENGTH, []);
let byHead: GramIndex<string> = createGramIndex(MIN_PIECE, []);
let byTail: GramIndex<string> = createGramIndex(MIN_PIECE, []);
let byJsonPiece: GramIndex<string> = createGramIndex(MIN_PIECE, []);
/** Secrets holding the mask itself: a replacement could make them appear, so always tried. */
let holdingMask: string[] = [];

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
	if (!changed) return;
	ordered = [...secrets].sort((a, b) => b.length - a.length);
	longest = ordered[0]?.length ?? 0;
	const forms = ordered.map((s) => JSON.stringify(s).slice(1, -1));
	jsonPieces = [
		...new Set(
			forms.flatMap((s) => [s.slice(0, MIN_PIECE), s.slice(-MIN_PIECE)]),
		),
	];
	rank = new Map(ordered.map((s, i) => [s, i]));
	byStart = createGramIndex(
		MIN_SECRET_LENGTH,
		ordered.map((s) => [s.slice(0, MIN_SECRET_LENGTH), s]),
	);
	byHead = createGramIndex(
		MIN_PIECE,
		ordered.map((s) => [s.slice(0, MIN_PIECE), s]),
	);
	byTail = createGramIndex(
		MIN_PIECE,
		ordered.map((s) => [s.slice(-MIN_PIECE), s]),
	);
	byJsonPiece = createGramIndex(
		MIN_PIECE,
		jsonPieces.map((p) => [p, p]),
	);
	holdingMask = ordered.filter((s) => s.includes(MASK));
}

/**
 * `apply(text, secret)` for every secret in `ordered` order, as a loop over all of them would,
 * but only for the secrets `find` says may touch the text: a secret it does not name leaves the
 * text as it is, and after each change the candidates are found again in the new text.
 */
function sweep(
	text: string,
	find: (text: string) => Set<string>,
	apply: (text: string, secret: string) => string,
): string {
	let out = text;
	let after = -1;
	for (;;) {
		const found = find(out);
		for (const s of holdingMask) found.add(s);
		let next: string | undefined;
		let nextRank = Number.POSITIVE_INFINITY;
		for (const s of found) {
			const r = rank.get(s) as number;
			if (r > after && r < nextRank) {
				next = s;
				nextRank = r;
			}
		}
		if (next === undefined) return out;
		after = nextRank;
		out = apply(out, next);
	}
}

/** Secrets that may occur whole in the text. */
const wholeIn = (text: string) => byStart.candidates(text);

/** Secrets whose beginning may end the text or whose end may start it (5+ characters). */
function edgesIn(text: string): Set<string> {
	const found = byHead.candidates(text, Math.max(0, text.length - longest));
	for (const s of byTail.candidates(text, 0, longest)) found.add(s);
	return found;
}

/**
 * Registers every secret a configuration holds: each machine's token, `T3CODE_MCP_TOKEN`, the
 * hook token and secret, and the hook URL's query values and long path segments; and the
 * machines' and clients' names (`registerNames`).
 */
export function registerConfigSecrets(config: AppConfig): void {
	const { server } = config;
	registerNames([
		...config.machines.map((m) => m.name),
		...config.clients.map((c) => c.name),
	]);
	registerSecrets([
		...config.machines.map((m) => m.token),
		...config.clients.map((c) => c.token),
		server.token,
		server.hookToken,
		server.hookSecret,
		...(server.hookUrl === undefined ? [] : urlSecrets(server.hookUrl)),
		config.approvals?.hookToken,
		...(config.approvals ? urlSecrets(config.approvals.hookUrl) : []),
	]);
}

/**
 * An approval link's path (`/a/<token>`, CONTRACT.md "Approval links") with the token masked.
 * Tokens are 43 base64url characters; any run of 16 or more after `/a/` is taken for one.
 */
const LINK_PATH = /\/a\/[A-Za-z0-9_-]{16,}/g;

/** Masks the token of every approval link path in the text (log lines, stored event bodies). */
export function maskLinkPaths(text: string): string {
	return text.includes("/a/") ? text.replace(LINK_PATH, `/a/${MASK}`) : text;
}

/** A URL's query values, fragment and path segments of 16+ characters (raw and decoded). */
function urlSecrets(raw: string): string[] {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		return [raw];
	}
	const out: string[] = [];
	for (const segment of url.pathname.split("/"))
		if (segment.length >= MIN_PATH_SECRET_LENGTH)
			out.push(segment, decoded(segment));
	for (const [, value] of url.searchParams) out.push(value);
	for (const part of url.search.slice(1).split("&")) {
		const eq = part.indexOf("=");
		if (eq !== -1) out.push(part.slice(eq + 1));
	}
	if (url.hash.length > 1) out.push(url.hash.slice(1));
	if (url.password) out.push(url.password, decoded(url.password));
	return out;
}

function decoded(text: string): string {
	try {
		return decodeURIComponent(text);
	} catch {
		return text;
	}
}

/**
 * Masks every configured secret. Nothing else is changed: this is the masking for messages,
 * titles, questions and diffs, and the safety net on everything that leaves.
 */
export function maskSecrets(text: string): string {
	if (ordered.length === 0 || text.length < MIN_SECRET_LENGTH) return text;
	return sweep(text, wholeIn, (out, secret) =>
		out.includes(secret) ? out.replaceAll(secret, MASK) : out,
	);
}

/**
 * `maskSecrets`, and a piece of 5+ characters of a secret at the very start or end of the
 * text masked too: for T3 text about to be cut, or cut already (a message still streaming, a
 * snippet). Not for names and other short texts of our own, where a prefix of a secret is
 * more likely a coincidence ("refuser" and "refuser-token-…").
 */
export function maskPieces(text: string): string {
	if (ordered.length === 0 || text.length < MIN_PIECE) return text;
	return sweep(maskSecrets(text), edgesIn, maskEdges);
}

/** A piece of `secret` ending the text (its beginning) or starting it (its end), masked. */
function maskEdges(text: string, secret: string): string {
	return maskHead(maskTail(text, secret), secret);
}

/** Client and machine names: shown anyway, so never taken for a piece of a secret (`redactOwn`). */
const names = new Set<string>();

/** Names of our own (clients, machines) that `redactOwn` leaves alone where they end or start a text. */
export function registerNames(values: Iterable<string>): void {
	for (const value of values) names.add(value);
}

const WORD_CHAR = /[\p{L}\p{N}_-]/u;
/** Whether `piece`, found in `text` from `start`, is a configured name standing alone there. */
function isName(text: string, start: number, piece: string): boolean {
	return (
		names.has(piece) &&
		!WORD_CHAR.test(text[start - 1] ?? " ") &&
		!WORD_CHAR.test(text[start + piece.length] ?? " ")
	);
}

/**
 * A beginning of `secret` (5+ characters) ending the text, masked. With `keepNames`, a piece that
 * is exactly a client's or machine's name standing alone ("client agent", token
 * "agent-token-…") is a neighbour of the secret, shown anyway, and stays.
 */
function maskTail(text: string, secret: string, keepNames = false): string {
	const max = secret.length - 1;
	// The earliest start in the last `max` characters is the longest piece.
	const head = secret.slice(0, MIN_PIECE);
	for (
		let i = text.indexOf(head, Math.max(0, text.length - max));
		i !== -1 && text.length - i >= MIN_PIECE;
		i = text.indexOf(head, i + 1)
	) {
		const piece = text.slice(i);
		if (!secret.startsWith(piece)) continue;
		if (!(keepNames && isName(text, i, piece)))
			return `${text.slice(0, i)}${MASK}`;
	}
	return text;
}

/** An end of `secret` (5+ characters) starting the text, masked; `keepNames` as for `maskTail`. */
function maskHead(text: string, secret: string, keepNames = false): string {
	const tail = secret.slice(-MIN_PIECE);
	const window = text.slice(0, secret.length - 1);
	let cut = -1;
	for (
		let i = window.indexOf(tail);
		i !== -1;
		i = window.indexOf(tail, i + 1)
	) {
		const piece = window.slice(0, i + MIN_PIECE);
		if (!secret.endsWith(piece)) continue;
		if (!(keepNames && isName(text, 0, piece))) cut = piece.length;
	}
	return cut === -1 ? text : `${MASK}${text.slice(cut)}`;
}

/** Where a text says it was cut ("…text…", "text..."). */
const ELLIPSIS = /(…|\.\.\.)/;

/**
 * A piece of a secret next to an ellipsis masked: a text T3 cut and marked so (a search
 * snippet) may cut a secret there. Unmarked edges are left alone (names are not pieces).
 */
function maskCutPieces(text: string): string {
	if (!text.includes("…") && !text.includes("...")) return text;
	const parts = text.split(ELLIPSIS);
	for (let i = 0; i < parts.length; i += 2) {
		parts[i] = sweep(parts[i] as string, edgesIn, (part, secret) => {
			const cut = i + 1 < parts.length ? maskTail(part, secret) : part;
			return i > 0 ? maskHead(cut, secret) : cut;
		});
	}
	return parts.join("");
}

/**
 * `maskSecrets`, then `text` cut to at most `max` characters ending with `marker` when it was
 * longer. Only what can be kept (plus a secret's length) is masked, so a huge text costs little.
 */
export function maskAndCap(text: string, max: number, marker: string): string {
	const margin = max + longest;
	const wasLonger = text.length > margin;
	const masked = maskPieces(wasLonger ? text.slice(0, margin) : text);
	if (!wasLonger && masked.length <= max) return masked;
	return `${masked.slice(0, Math.max(0, max - marker.length))}${marker}`;
}

/** Header names whose value is a credential: `Authorization: Bearer x`, `Cookie: s=x`. */
const HEADER_VALUE =
	/(\b(?:proxy-)?authorization|\bcookie|\bset-cookie|\bx-api-key)(["']?\s*[:=]\s*["']?)(?!\[redacted\])(?:(?:bearer|basic|token|digest)\s+)?(?!\[redacted\])[^\s"',;}\]]+/gi;
/** Names of values that are credentials (`access_token`, `password`, `wsTicket`, `api_key`, …). */
const CREDENTIAL_KEY =
	"[a-z_-]*(?:token|secret|password|passwd|api[_-]?key|credentials?|ticket)";
/**
 * `key=value` (queries, forms) and quoted `"key": "value"` (JSON). An unquoted `key: value` is
 * prose ("no token: environment variable … is not set") and is left alone. A value that is
 * already the mask is left alone, so masking twice changes nothing.
 */
const KEYED_VALUE = new RegExp(
	`(\\b${CREDENTIAL_KEY}\\b["']?\\s*=\\s*["']?|\\b${CREDENTIAL_KEY}["']\\s*:\\s*["'])(?!\\[redacted\\])[^\\s"'&,;}\\]]+`,
	"gi",
);
/** A bare `Bearer x` / `Basic x` anywhere. */
const SCHEME_VALUE = /\b(bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})/gi;
/** `scheme://user:password@host`. */
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)(?!\[redacted\]@)[^\s/@]+@/gi;

/**
 * `maskSecrets` plus any credential-looking value (`Authorization: …`, `Bearer …`,
 * `token=…`, userinfo): for error bodies and reasons only.
 */
export function maskCredentials(text: string): string {
	return maskCredentialPatterns(maskSecrets(text));
}

function maskCredentialPatterns(text: string): string {
	return text
		.replace(
			HEADER_VALUE,
			(_m, name: string, sep: string) => `${name}${sep}${MASK}`,
		)
		.replace(KEYED_VALUE, (_m, key: string) => `${key}${MASK}`)
		.replace(SCHEME_VALUE, (_m, scheme: string) => `${scheme} ${MASK}`)
		.replace(USERINFO, (_m, scheme: string) => `${scheme}${MASK}@`);
}

/**
 * An outside error body or reason as it may be shown or logged: credentials masked, then cut at
 * `max` (default 500) characters ending with "…". Masking comes first, so a secret cut by the cap
 * cannot leave its beginning behind.
 */
export function redact(text: string, max = MAX_OUTSIDE_TEXT): string {
	// A credential pattern reaches at most this far back from the cut.
	const margin = max + longest + 100;
	const wasLonger = text.length > margin;
	const masked = maskCredentialPatterns(
		maskPieces(wasLonger ? text.slice(0, margin) : text),
	);
	if (!wasLonger && masked.length <= max) return masked;
	return `${Array.from(masked.slice(0, max)).slice(0, -1).join("")}…`;
}

/**
 * `redact` for a text of our own that may quote outside text (a log line's message and fields):
 * every configured secret masked wherever it is, a piece of one masked at the text's edges and
 * next to an ellipsis, credential-looking values masked, then cut at `max` ending with "…". Only
 * the secret is masked, not its neighbours: a client's or machine's name standing alone at an
 * edge stays, though it equals a piece of a secret (client "agent" with token "agent-token-…":
 * "client agent"). A name is shown anyway (`check`, `t3_machines`), so keeping it reveals nothing.
 */
export function redactOwn(text: string, max = MAX_OUTSIDE_TEXT): string {
	const margin = max + longest + 100;
	const wasLonger = text.length > margin;
	const masked = maskCredentialPatterns(
		sweep(
			maskCutPieces(maskSecrets(wasLonger ? text.slice(0, margin) : text)),
			edgesIn,
			(out, secret) => maskHead(maskTail(out, secret, true), secret, true),
		),
	);
	if (!wasLonger && masked.length <= max) return masked;
	return `${Array.from(masked.slice(0, max)).slice(0, -1).join("")}…`;
}

/**
 * The safety net for a value about to leave (a tool result, an event body, a stored row):
 * every string in it (keys too) through `maskSecrets`, and a piece of a secret next to an
 * ellipsis (a text T3 cut) masked. Returns the value itself when nothing needed masking, else
 * a masked copy.
 */
export function maskDeep<T>(value: T): T {
	if (ordered.length === 0) return value;
	return deep(value, 0) as T;
}

function deep(value: unknown, depth: number): unknown {
	if (typeof value === "string") return maskCutPieces(maskSecrets(value));
	if (value === null || typeof value !== "object" || depth > 64) return value;
	if (Array.isArray(value)) {
		let out: unknown[] | undefined;
		for (let i = 0; i < value.length; i++) {
			const v = deep(value[i], depth + 1);
			if (v !== value[i]) {
				out ??= value.slice();
				out[i] = v;
			}
		}
		return out ?? value;
	}
	const record = value as Record<string, unknown>;
	const keys = Object.keys(record);
	for (let i = 0; i < keys.length; i++) {
		const key = keys[i] as string;
		const k = maskSecrets(key);
		const v = deep(record[key], depth + 1);
		if (k === key && v === record[key]) continue;
		// Rebuilt in the same key order from the first change on.
		const out: Record<string, unknown> = {};
		for (let j = 0; j < i; j++)
			out[keys[j] as string] = record[keys[j] as string];
		out[k] = v;
		for (let j = i + 1; j < keys.length; j++) {
			const key2 = keys[j] as string;
			out[maskSecrets(key2)] = deep(record[key2], depth + 1);
		}
		return out;
	}
	return value;
}

/**
 * Whether a JSON text may hold a secret or a piece of one: its first or last 5 characters (two
 * `includes` over the text per secret; `maskDeep` then decides exactly).
 */
export function mayHoldSecret(json: string): boolean {
	for (const piece of byJsonPiece.candidates(json))
		if (json.includes(piece)) return true;
	return false;
}

/** `maskDeep` for a value kept as JSON text (event bodies, stored results). */
export function maskJsonText(json: string): string {
	if (!mayHoldSecret(json)) return json;
	try {
		return JSON.stringify(maskDeep(JSON.parse(json)));
	} catch {
		return maskSecrets(json);
	}
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

/**
 * A configured URL as errors show it: without its query string and fragment (they may carry a
 * secret) and at most 200 characters.
 */
export function urlShown(url: string): string {
	const q = url.search(/[?#]/);
	const bare = q === -1 ? url : url.slice(0, q);
	const masked = maskSecrets(bare);
	return masked.length > 200 ? `${masked.slice(0, 200)}…` : masked;
}

/** Clears the registry (unit tests only). */
export function clearSecretsForTest(): void {
	secrets.clear();
	names.clear();
	ordered = [];
	jsonPieces = [];
	longest = 0;
	rank = new Map();
	holdingMask = [];
	byStart = byHead = byTail = byJsonPiece = createGramIndex(MIN_PIECE, []);
}
