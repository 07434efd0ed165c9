/**
 * `MCP-Protocol-Version`: a version this server does not serve is refused here, naming every
 * version it does serve. The SDK's own refusal (its 2025-era handler) lists only the 2025-era
 * versions, so a client told "supported: 2025-11-25, …" never learns 2026-07-28 would work.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import type { MiddlewareHandler } from "hono";

/** The 2026-era revisions the SDK serves (its list of them is not exported). */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"];

/** Every version served, newest first. */
export const SERVED_PROTOCOL_VERSIONS = [
	...new Set([...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS]),
].sort((a, b) => b.localeCompare(a));

export const protocolVersionGuard = (): MiddlewareHandler =>
	async function protocolVersionGuard(c, next) {
		const asked = c.req.header("mcp-protocol-version");
		if (asked !== undefined && !SERVED_PROTOCOL_VERSIONS.includes(asked))
			return c.json(
				{
					jsonrpc: "2.0",
					id: null,
					error: {
						code: -32000,
						message: `Bad Request: Unsupported protocol version: ${JSON.stringify(asked.slice(0, 100))} (supported versions: ${SERVED_PROTOCOL_VERSIONS.join(", ")})`,
						data: { supported: SERVED_PROTOCOL_VERSIONS },
					},
				},
				400,
			);
		await next();
	};
