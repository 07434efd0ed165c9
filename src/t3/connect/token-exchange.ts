/**
 * The pairing exchange (RELEASED-0.1.md §2): `POST /oauth/token` trades a pairing link's
 * single-use credential for a bearer token with the scopes asked for. Sent once, never
 * retried: a reply that does not say clearly what happened (no answer, a timeout, a 5xx,
 * garbage) is `uncertain`, because the credential may be spent by then.
 */
import { AnswerTooLargeError } from "../../util/capped-fetch.ts";
import type { FetchLike } from "./http.ts";

const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const BOOTSTRAP = "urn:t3:params:oauth:token-type:environment-bootstrap";
const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";

export type ExchangeResult =
	| {
			ok: true;
			token: string;
			/** "Bearer" or "DPoP" as T3 says; the caller decides what it can use. */
			tokenType: string;
			/** The granted scopes when T3 lists them. */
			scopes: string[] | null;
			/** Seconds, when T3 says. */
			expiresIn: number | null;
	  }
	| {
			ok: false;
			/**
			 * `refused`: the credential is unknown, expired or spent (401). `scope`: the link does
			 * not grant a scope asked for (400 invalid_scope). `invalid`: another 4xx.
			 * `uncertain`: no clear answer; the credential may have been used.
			 */
			kind: "refused" | "scope" | "invalid" | "uncertain";
			/** Token-free: status and T3's error code/reason only. */
			detail: string;
	  };

export interface ExchangeRequest {
	/** Origin plus base path, no trailing slash. */
	base: string;
	credential: string;
	scopes: string[];
	clientLabel: string;
	fetch?: FetchLike;
	timeoutMs?: number;
}

/** T3's error code and reason (never a value that could be the credential). */
function errorSummary(body: unknown): string {
	if (typeof body !== "object" || body === null) return "";
	const b = body as Record<string, unknown>;
	const parts = [b.code, b.reason, b.error].filter(
		(p): p is string => typeof p === "string" && /^[\w.:-]{1,80}$/.test(p),
	);
	return parts.length > 0 ? ` (${[...new Set(parts)].join(", ")})` : "";
}

export async function exchangePairingCredential(
	request: ExchangeRequest,
): Promise<ExchangeResult> {
	const doFetch: FetchLike = request.fetch ?? ((url, init) => fetch(url, init));
	const body = new URLSearchParams({
		grant_type: GRANT,
		subject_token: request.credential,
		subject_token_type: BOOTSTRAP,
		requested_token_type: ACCESS_TOKEN,
		scope: request.scopes.join(" "),
		client_label: request.clientLabel,
		client_device_type: "bot",
	});
	let status: number;
	let text: string;
	try {
		const res = await doFetch(`${request.base}/oauth/token`, {
			method: "POST",
			headers: {
				accept: "application/json",
				"content-type": "application/x-www-form-urlencoded",
			},
			body: body.toString(),
			signal: AbortSignal.timeout(request.timeoutMs ?? 15_000),
		});
		status = res.status;
		text = await res.text();
	} catch (err) {
		const timedOut =
			err instanceof Error &&
			(err.name === "TimeoutError" || err.name === "AbortError");
		return {
			ok: false,
			kind: "uncertain",
			detail: timedOut
				? "no answer in time"
				: err instanceof AnswerTooLargeError
					? err.message
					: "the connection failed",
		};
	}
	let parsed: unknown;
	try {
		parsed = text.length > 0 ? JSON.parse(text) : undefined;
	} catch {
		parsed = undefined;
	}
	const summary = `${status}${errorSummary(parsed)}`;
	if (status === 401) return { ok: false, kind: "refused", detail: summary };
	if (status === 400) {
		const b = (parsed ?? {}) as Record<string, unknown>;
		const scope =
			b.code === "invalid_scope" ||
			b.error === "invalid_scope" ||
			b.reason === "scope_not_granted";
		return { ok: false, kind: scope ? "scope" : "invalid", detail: summary };
	}
	if (status >= 400 && status < 500)
		return { ok: false, kind: "invalid", detail: summary };
	if (status !== 200 || typeof parsed !== "object" || parsed === null)
		return { ok: false, kind: "uncertain", detail: `${status}` };
	const reply = parsed as Record<string, unknown>;
	if (typeof reply.access_token !== "string" || reply.access_token === "")
		return {
			ok: false,
			kind: "uncertain",
			detail: "200 without an access_token",
		};
	return {
		ok: true,
		token: reply.access_token,
		tokenType: typeof reply.token_type === "string" ? reply.token_type : "",
		scopes:
			typeof reply.scope === "string"
				? reply.scope.split(/\s+/).filter(Boolean)
				: null,
		expiresIn:
			typeof reply.expires_in === "number" && Number.isFinite(reply.expires_in)
				? reply.expires_in
				: null,
	};
}
