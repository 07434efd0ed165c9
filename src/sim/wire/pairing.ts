/**
 * Pairing links and `POST /oauth/token` (RELEASED-0.1.md §2, captures-v2 http-oauth-token.json):
 * a link carries a single-use bootstrap credential in its hash (`…/pair#token=…`); exchanging it
 * narrows the link's grant to the scopes asked for and issues a 30-day bearer token. Spent,
 * expired and unknown credentials are all the same 401, as on a real server.
 */

import { newId } from "../engine/rows.ts";
import {
	type Auth,
	OPERATE_SCOPE,
	READ_SCOPE,
	SESSION_TTL_MS,
} from "./auth.ts";
import { authInvalid, json } from "./http-routes.ts";

export const TOKEN_EXCHANGE_GRANT =
	"urn:ietf:params:oauth:grant-type:token-exchange";
export const BOOTSTRAP_TOKEN_TYPE =
	"urn:t3:params:oauth:token-type:environment-bootstrap";
export const ACCESS_TOKEN_TYPE =
	"urn:ietf:params:oauth:token-type:access_token";
/** `t3 pair` links last 5 minutes unless `--ttl` says otherwise. */
const LINK_TTL_MS = 5 * 60_000;

export interface PairingLinkOptions {
	/** What the link grants; default orchestration:read + orchestration:operate. */
	scopes?: string[];
	ttlMs?: number;
	/** "DPoP": the exchange answers with a DPoP-bound token (a client t3code-mcp cannot be). */
	tokenType?: "Bearer" | "DPoP";
	/** The issued token's life; default 30 days. Negative: a token already expired when issued. */
	tokenTtlMs?: number;
}

export interface Pairing {
	/** A new single-use link on `baseUrl` (credential in the hash). */
	link(baseUrl: string, options?: PairingLinkOptions): string;
	exchange(request: Request): Promise<Response>;
}

interface Credential {
	scopes: string[];
	expires: number;
	tokenType: "Bearer" | "DPoP";
	tokenTtlMs: number;
}

const requestInvalid = (code: string, reason: string) =>
	json(400, {
		_tag: "EnvironmentRequestInvalidError",
		code,
		reason,
		traceId: crypto.randomUUID().replaceAll("-", ""),
	});

export function createPairing(auth: Auth, now: () => number): Pairing {
	const credentials = new Map<string, Credential>();

	return {
		link(baseUrl, options = {}) {
			const credential = `pair-${newId().replaceAll("-", "")}`;
			credentials.set(credential, {
				scopes: [...(options.scopes ?? [READ_SCOPE, OPERATE_SCOPE])],
				expires: now() + (options.ttlMs ?? LINK_TTL_MS),
				tokenType: options.tokenType ?? "Bearer",
				tokenTtlMs: options.tokenTtlMs ?? SESSION_TTL_MS,
			});
			return `${baseUrl}/pair#token=${credential}`;
		},
		async exchange(request) {
			if (request.method !== "POST")
				return json(405, { message: "Method not allowed" });
			let form: URLSearchParams;
			try {
				form = new URLSearchParams(await request.text());
			} catch {
				return requestInvalid("invalid_request", "malformed_body");
			}
			if (form.get("grant_type") !== TOKEN_EXCHANGE_GRANT)
				return requestInvalid("unsupported_grant_type", "unsupported_grant");
			if (form.get("subject_token_type") !== BOOTSTRAP_TOKEN_TYPE)
				return requestInvalid("invalid_request", "unsupported_token_type");
			const requested = form.get("requested_token_type");
			if (requested !== null && requested !== ACCESS_TOKEN_TYPE)
				return requestInvalid("invalid_request", "unsupported_token_type");
			const subject = form.get("subject_token") ?? "";
			const credential = credentials.get(subject);
			if (!credential || credential.expires <= now())
				return authInvalid("invalid_credential");
			const asked = (form.get("scope") ?? "").split(/\s+/).filter(Boolean);
			// Narrowing only: a scope the link does not grant is refused, not dropped.
			if (asked.some((s) => !credential.scopes.includes(s)))
				return requestInvalid("invalid_scope", "scope_not_granted");
			credentials.delete(subject);
			const scopes = asked.length > 0 ? asked : credential.scopes;
			const token = `sim-paired-${newId()}`;
			const expiresAt = now() + credential.tokenTtlMs;
			auth.grant(token, scopes, new Date(expiresAt).toISOString());
			return json(
				200,
				{
					access_token: token,
					issued_token_type: ACCESS_TOKEN_TYPE,
					token_type: credential.tokenType,
					// A moment after issuing: 2591999 for 30 days, as the capture shows.
					expires_in: Math.floor((expiresAt - now() - 1) / 1000),
					scope: scopes.join(" "),
				},
				{ "Cache-Control": "no-store", Pragma: "no-cache" },
			);
		},
	};
}
