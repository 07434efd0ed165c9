/**
 * The negotiate half of the connect sequence (PROTOCOL.md §0.3): the descriptor's orchestration
 * protocol, then the token's session and scopes, all over HTTP before any socket is opened. The
 * answer says whether to open the socket or which state the machine stays in (and why) until it
 * looks again.
 */
import type { MachineConfig } from "../config/types.ts";
import type { T3Http } from "./http.ts";
import type { EnvironmentDescriptor } from "./model.ts";

export const REQUIRED_SCOPES = [
	"orchestration:read",
	"orchestration:operate",
] as const;

export type Negotiation =
	| { kind: "ok"; descriptor: EnvironmentDescriptor }
	| { kind: "refused"; state: "incompatible" | "unauthorized"; reason: string }
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
}

export async function negotiate(opts: NegotiateOptions): Promise<Negotiation> {
	const { http, config, label, base } = opts;
	const descriptor = await http.descriptor();
	if (opts.stale()) return { kind: "stale" };
	opts.onDescriptor(descriptor);
	const version = descriptor.orchestrationProtocolVersion;
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
	if (config.token === undefined) {
		return {
			kind: "refused",
			state: "unauthorized",
			reason: `${label}: no token: environment variable ${config.tokenEnv} is not set`,
		};
	}
	const session = await http.authSession();
	if (opts.stale()) return { kind: "stale" };
	if (!session.authenticated) {
		return {
			kind: "refused",
			state: "unauthorized",
			reason: `${label}: token rejected by ${base}`,
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
	return { kind: "ok", descriptor };
}
