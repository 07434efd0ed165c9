/**
 * `[approvals]` read against the rest of the config (CONTRACT.md "Approval links"): the link
 * client must exist and hold `approve`, and links need `public_url`. The table's own keys are
 * checked by the file schema; the people hook's bearer comes from the variable it names.
 */
import type { ConfigProblem } from "./config-error.ts";
import { credentialToken } from "./credentials.ts";
import { type Env, envValue } from "./env.ts";
import type { FileApprovals } from "./file-schema.ts";
import type { ApprovalsConfig, ClientConfig, ServerSettings } from "./types.ts";

export const DEFAULT_LINK_TTL_S = 3600;
/** A tap in a chat must not grant standing permission: accept and decline only by default. */
export const DEFAULT_LINK_DECISIONS = ["accept", "decline"];

export function readApprovals(
	table: FileApprovals | undefined,
	server: Pick<ServerSettings, "publicUrl">,
	clients: ClientConfig[],
	shown: string,
	env: Env,
): { value: ApprovalsConfig | null; problems: ConfigProblem[] } {
	if (table === undefined) return { value: null, problems: [] };
	const problems: ConfigProblem[] = [];
	const client = clients.find((c) => c.name === table.link_client);
	const expected = "the name of a [clients.<name>] table with approve = true";
	if (client === undefined)
		problems.push({
			file: shown,
			key: "approvals.link_client",
			expected,
			message: `no client "${table.link_client}" is configured; add [clients.${table.link_client}] with approve = true, or name an existing approver`,
		});
	else if (!client.approve)
		problems.push({
			file: shown,
			key: "approvals.link_client",
			expected,
			message: `client "${client.name}" may not answer approvals (approve is false); set approve = true on it, or name an approver client`,
		});
	if (server.publicUrl === undefined)
		problems.push({
			file: shown,
			key: "approvals",
			expected: "[server] public_url (or T3CODE_MCP_PUBLIC_URL) set with it",
			message:
				'approval links need [server] public_url (or T3CODE_MCP_PUBLIC_URL): the address people open them at, like "https://t3mcp.example.ts.net"',
		});
	const tokenEnv = table.hook_token_env ?? null;
	return {
		value:
			problems.length > 0
				? null
				: {
						linkClient: table.link_client,
						hookUrl: table.hook_url,
						hookTokenEnv: tokenEnv,
						hookToken:
							tokenEnv === null
								? undefined
								: (envValue(env, tokenEnv) ?? credentialToken(env, tokenEnv)),
						linkTtlS: table.link_ttl_s ?? DEFAULT_LINK_TTL_S,
						decisions: [...new Set(table.decisions ?? DEFAULT_LINK_DECISIONS)],
					},
		problems,
	};
}
