/**
 * Who is calling: the bearer picks the client (CONTRACT.md "Clients and rights"). Every
 * client's token is compared, each in constant time on SHA-256 digests, so neither the time
 * nor an early exit tells which token came close. Without `[clients.*]` the one
 * `T3CODE_MCP_TOKEN` (if set) is the client `default`; with neither, every caller is `default`.
 * Used by `/mcp` and by the console's sign-in alike.
 */
import { DEFAULT_CLIENT, fullRights, OPEN_CALLER } from "../config/clients.ts";
import type { AppConfig, ClientConfig } from "../config/types.ts";

const encoder = new TextEncoder();
const sha256 = async (s: string) =>
	new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(s)));

const BEARER = /^Bearer[ \t]+(.*?)[ \t]*$/i;

/** The callers that can authenticate, or undefined when the server is open. */
export function knownCallers(config: AppConfig): ClientConfig[] | undefined {
	if (config.clients.length > 0) return config.clients;
	const token = config.server.token;
	return token === undefined || token === ""
		? undefined
		: [fullRights(DEFAULT_CLIENT, token)];
}

/**
 * Resolves an `Authorization` header to its client, or undefined (401). The clients are read at
 * each request: a reload that replaced them (SIGHUP) applies to the next one.
 */
export function callerMatcher(
	config: AppConfig,
): (authorization: string | undefined) => Promise<ClientConfig | undefined> {
	/** What the digests were made from: the clients array, else the one token. */
	let madeFrom: unknown = {};
	let callers: ClientConfig[] | undefined;
	let digests: Promise<{
		client: ClientConfig;
		digest: Uint8Array | undefined;
	}>[] = [];
	return async function callerOf(authorization) {
		const source =
			config.clients.length > 0 ? config.clients : config.server.token;
		if (source !== madeFrom) {
			madeFrom = source;
			callers = knownCallers(config);
			digests = (callers ?? []).map(async (c) => ({
				client: c,
				digest: c.token === undefined ? undefined : await sha256(c.token),
			}));
		}
		if (callers === undefined) return OPEN_CALLER;
		const match = BEARER.exec(authorization ?? "");
		const given = await sha256(match?.[1] ?? "");
		let found: ClientConfig | undefined;
		for (const pending of digests) {
			const { client, digest } = await pending;
			let diff = match === null || digest === undefined ? 1 : 0;
			for (let i = 0; i < given.length; i++)
				diff |= (digest?.[i] ?? 0) ^ (given[i] ?? 0);
			if (diff === 0) found = client;
		}
		return found;
	};
}
