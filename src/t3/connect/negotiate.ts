/**
 * The negotiate half of the connect sequence (PROTOCOL.md §0.3): the descriptor's orchestration
 * protocol, then the token's session and scopes, all over HTTP before any socket is opened. The
 * answer says whether to open the socket or which state the machine stays in (and why) until it
 * looks again.
 */
import type { MachineToken } from "../../config/token-file.ts";
import type { MachineConfig } from "../../config/types.ts";
import { T3Error } from "../machine-api.ts";
import type { AuthSession, EnvironmentDescriptor } from "../model.ts";
import type { T3Http } from "./http.ts";
import {
	expiredTokenReason,
	mintNewToken,
	sessionExpiry,
} from "./token-expiry.ts";

export const REQUIRED_SCOPES = [
	"orchestration:read",
	"orchestration:operate",
] as const;

/** Why a server on a newer orchestration protocol than 2 is refused, and what to do. */
export function tooOldFor(version: number): string {
	return `this t3code-mcp is too old for orchestration protocol ${version}; update t3code-mcp`;
}

export type Negotiation =
	| {
			kind: "ok";
			descriptor: EnvironmentDescriptor;
			/** When the token stops working, as T3 says; null when it does not. */
			tokenExpiresAt: string | null;
	  }
	| {
			kind: "refused";
			state: "incompatible" | "unauthorized";
			reason: string;
			/** Set when the token is known to have expired. */
			tokenExpiresAt?: string;
	  }
	/** The connect attempt was superseded (stop, or a newer attempt) while waiting. */
	| { kind: "stale" };

export interface NegotiateOptions {
	http: T3Http;
	config: MachineConfig;
	/** Names the machine in every reason: `T3 machine "name" (url)`. */
	label: string;
	base: string;
	/** See MachineDeps.assumeProtocol2. */
	assumeProtocol2?: boolean;
	stale: () => boolean;
	/** The descriptor as soon as it is read, so the machine shows the server's version even when refused later. */
	onDescriptor: (descriptor: EnvironmentDescriptor) => void;
	/** The token now (a token file is read again at every connect), or why there is none. */
	readToken: () => Promise<MachineToken>;
	/** The token the requests of this attempt (and its socket) carry from here on. */
	useToken: (token: string) => void;
	/** The expiry T3 last reported for this token, if any: tells "expired" from "rejected". */
	knownExpiry: (token: string) => string | null;
	now: () => number;
}

export async function negotiate(opts: NegotiateOptions): Promise<Negotiation> {
	const { http, config, label, base } = opts;
	// Read first (it is local): a token file's token is then masked before any T3 text arrives.
	const token = await opts.readToken();
	if (opts.stale()) return { kind: "stale" };
	const descriptor = await http.descriptor();
	if (opts.stale()) return { kind: "stale" };
	opts.onDescriptor(descriptor);
	const version = descriptor.orchestrationProtocolVersion;
	// A newer protocol is ours to catch up with, not the operator's T3 to change.
	if (version !== undefined && version > 2) {
		return {
			kind: "refused",
			state: "incompatible",
			reason: `${label} runs T3 Code ${descriptor.serverVersion ?? "an unknown version"} with orchestration protocol ${version}; ${tooOldFor(version)}`,
		};
	}
	if (version !== 2 && !(version === undefined && opts.assumeProtocol2)) {
		const reported = descriptor.serverVersion ?? "an unknown version";
		const proto =
			version === undefined
				? "no orchestration protocol version (protocol 1)"
				: `orchestration protocol ${version}`;
		return {
			kind: "refused",
			state: "incompatible",
			reason: `${label} runs T3 Code ${reported} with ${proto}; T3 Code 0.1.0 or later (orchestration protocol 2) is required`,
		};
	}
	if (token.token === undefined)
		return {
			kind: "refused",
			state: "unauthorized",
			reason: `${label}: ${token.problem}`,
		};
	opts.useToken(token.token);
	let session: AuthSession;
	try {
		session = await http.authSession();
	} catch (err) {
		// Some servers answer a dead token with 401 instead of `authenticated: false`.
		if (!(err instanceof T3Error && err.code === "UNAUTHORIZED")) throw err;
		session = { authenticated: false };
	}
	if (opts.stale()) return { kind: "stale" };
	if (!session.authenticated) {
		const expiry = opts.knownExpiry(token.token);
		if (expiry !== null && Date.parse(expiry) <= opts.now())
			return {
				kind: "refused",
				state: "unauthorized",
				reason: `${label}: ${expiredTokenReason(expiry)}`,
				tokenExpiresAt: expiry,
			};
		return {
			kind: "refused",
			state: "unauthorized",
			reason: `${label}: token rejected by ${base} (expired, revoked or for another server); ${mintNewToken(config.tokenFile)}`,
		};
	}
	const scopes = new Set(session.scopes ?? []);
	const missing = REQUIRED_SCOPES.filter((s) => !scopes.has(s));
	if (missing.length > 0) {
		return {
			kind: "refused",
			state: "unauthorized",
			reason: `${label}: token lacks scope ${missing.join(", ")}`,
		};
	}
	return { kind: "ok", descriptor, tokenExpiresAt: sessionExpiry(session) };
}
