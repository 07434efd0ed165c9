/**
 * The bearer guard of `/mcp` and the operator routes: the caller's client (rights/callers.ts)
 * on the hono context, or 401.
 */
import type { MiddlewareHandler } from "hono";
import type { ClientConfig } from "../config/types.ts";

/** The hono variable the guard sets: the authenticated client. */
export type CallerEnv = { Variables: { client: ClientConfig } };

/**
 * Requires a known client's bearer; otherwise a bare 401 `{error: "unauthorized"}`.
 * Deliberately no `WWW-Authenticate` header: MCP clients (Claude Code) start OAuth discovery
 * when one is advertised and then ignore the static bearer.
 */
export const callerGuard = (
	callerOf: (
		authorization: string | undefined,
	) => Promise<ClientConfig | undefined>,
	/** Only clients this accepts pass (e.g. full-access for operator routes). */
	accepts: (client: ClientConfig) => boolean = () => true,
): MiddlewareHandler<CallerEnv> =>
	async function callerGuard(c, next) {
		const client = await callerOf(c.req.header("authorization"));
		if (client === undefined || !accepts(client))
			return c.json({ error: "unauthorized" }, 401);
		c.set("client", client);
		await next();
	};
