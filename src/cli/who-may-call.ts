/** Who may call `/mcp`, in words, for the start and reload logs. */
import { DEFAULT_CLIENT } from "../config/clients.ts";
import type { AppConfig } from "../config/types.ts";

/**
 * Exactly who may call `/mcp` (CONTRACT.md "Trust round three"): with `[clients.*]`, the
 * clients that have a token, by name (`default` is `T3CODE_MCP_TOKEN`); else the holder of
 * `T3CODE_MCP_TOKEN`; "open" only when there is neither.
 */
export function whoMayCall(
	config: Pick<AppConfig, "clients"> & {
		server: Pick<AppConfig["server"], "token">;
	},
): { mcp: string; clients: string[] } {
	if (config.clients.length > 0) {
		const named = (n: string) =>
			n === DEFAULT_CLIENT ? `${n} (T3CODE_MCP_TOKEN)` : n;
		const callers = config.clients
			.filter((c) => c.token !== undefined)
			.map((c) => c.name);
		const tokenless = config.clients
			.filter((c) => c.token === undefined)
			.map((c) => c.name);
		const waiting =
			tokenless.length > 0
				? `; without a token, so not yet: ${tokenless.join(", ")}`
				: "";
		return {
			mcp:
				callers.length > 0
					? `clients only, each with its own bearer: ${callers.map(named).join(", ")}${waiting}`
					: `no one: no client has a token yet (${tokenless.join(", ")})`,
			clients: callers,
		};
	}
	if (config.server.token !== undefined)
		return {
			mcp: "T3CODE_MCP_TOKEN needed (client default)",
			clients: [DEFAULT_CLIENT],
		};
	return {
		mcp: "open to anyone who can reach it (no [clients.*], T3CODE_MCP_TOKEN unset)",
		clients: [],
	};
}
