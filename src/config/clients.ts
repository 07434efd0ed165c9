/**
 * The callers of `/mcp` (CONTRACT.md "Clients and rights"): each `[clients.<name>]` table with
 * its token read the way a machine's is, plus `default` for `T3CODE_MCP_TOKEN`. Problems name
 * the file, the client and the key; a token is never shown, only its length or whose it equals.
 */
import { dirname } from "node:path";
import type { ConfigProblem } from "./config-error.ts";
import { credentialToken } from "./credentials.ts";
import { type Env, envValue, MIN_TOKEN_LENGTH } from "./env.ts";
import type { FileClient } from "./file-schema.ts";
import { readTokenFile, resolveTokenFile } from "./token-file.ts";
import type { ClientConfig, MachineConfig } from "./types.ts";

/** The client `T3CODE_MCP_TOKEN` names: every right, as the one bearer had before clients. */
export const DEFAULT_CLIENT = "default";

/** Full rights everywhere: `default`, and every caller when no client is configured. */
export function fullRights(
	name: string,
	token: string | undefined,
): ClientConfig {
	return {
		name,
		tokenEnv: null,
		tokenFile: null,
		token,
		access: "full-access",
		machines: ["*"],
		projects: ["*"],
		approve: true,
		maxActiveRuns: null,
	};
}

/** The caller of an open server (no bearer configured): every right, as before clients existed. */
export const OPEN_CALLER = fullRights(DEFAULT_CLIENT, undefined);

export async function readClients(
	tables: Record<string, FileClient>,
	serverToken: string | undefined,
	file: string,
	shown: string,
	env: Env,
	/** The machines as loaded: a client's bearer must be none of their tokens. */
	machines: Pick<MachineConfig, "name" | "token">[] = [],
): Promise<{ clients: ClientConfig[]; problems: ConfigProblem[] }> {
	const problems: ConfigProblem[] = [];
	const clients: ClientConfig[] = [];
	for (const [name, c] of Object.entries(tables)) {
		const tokenFile =
			c.token_file === undefined
				? null
				: resolveTokenFile(c.token_file, dirname(file), env);
		const tokenEnv = c.token_env ?? null;
		const fromFile =
			tokenFile === null ? undefined : await readTokenFile(tokenFile);
		const token =
			fromFile !== undefined
				? fromFile.token
				: tokenEnv === null
					? undefined
					: (envValue(env, tokenEnv) ?? credentialToken(env, tokenEnv));
		const key = `clients.${name}.${tokenFile === null ? "token_env" : "token_file"}`;
		const expected = `a token of ${MIN_TOKEN_LENGTH} or more characters`;
		if (name === DEFAULT_CLIENT && serverToken !== undefined)
			problems.push({
				file: shown,
				key: `clients.${name}`,
				expected: "a client name other than default",
				message: `"default" is the client of T3CODE_MCP_TOKEN; give this client another name, or unset T3CODE_MCP_TOKEN`,
			});
		if (fromFile?.problem !== undefined)
			problems.push({
				file: shown,
				key,
				expected,
				message: fromFile.problem,
			});
		else if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
			problems.push({
				file: shown,
				key,
				expected,
				message: `the token ${tokenFile === null ? `in ${tokenEnv}` : `in ${tokenFile}`} has ${token.length} characters; expected ${expected} (generate one with \`openssl rand -hex 32\`)`,
			});
		else if (token !== undefined) {
			const where = tokenFile === null ? `in ${tokenEnv}` : `in ${tokenFile}`;
			const bad = tokenProblem(token, where, machines);
			if (bad !== undefined) problems.push({ file: shown, key, ...bad });
		}
		clients.push({
			name,
			tokenEnv,
			tokenFile,
			token,
			access: c.access,
			machines: c.machines ?? ["*"],
			projects: c.projects ?? ["*"],
			approve: c.approve ?? false,
			maxActiveRuns: c.max_active_runs ?? null,
			...(c.max_held === undefined ? {} : { maxHeld: c.max_held }),
		});
	}
	if (clients.length > 0 && serverToken !== undefined) {
		clients.unshift(fullRights(DEFAULT_CLIENT, serverToken));
		const bad = tokenProblem(serverToken, "of client default", machines);
		if (bad !== undefined)
			problems.push({ file: undefined, key: "T3CODE_MCP_TOKEN", ...bad });
	}
	problems.push(...sharedTokens(clients, shown));
	return { clients, problems };
}

/** Whitespace (Unicode's too) and control characters: no bearer holds them, a paste error does. */
const NOT_IN_TOKEN = /[\s\p{Cc}]/u;

/**
 * What is wrong with a client's bearer beyond its length, never showing it: whitespace or
 * control characters inside it (a paste error; no client could send it), or a machine's T3 token
 * (a caller holding it could act as that client, and the client could call T3 directly).
 */
function tokenProblem(
	token: string,
	where: string,
	machines: Pick<MachineConfig, "name" | "token">[],
): Omit<ConfigProblem, "file" | "key"> | undefined {
	if (NOT_IN_TOKEN.test(token)) {
		const expected = "a token without whitespace or control characters";
		return {
			expected,
			message: `the token ${where} holds whitespace or control characters; expected ${expected} (generate one with \`openssl rand -hex 32\`)`,
		};
	}
	const machine = machines.find((m) => m.token === token);
	if (machine !== undefined)
		return {
			expected: "a token no machine has",
			message: `the token ${where} is the T3 token of machine "${machine.name}" (machines.${machine.name}); give the client a token of its own (\`openssl rand -hex 32\`)`,
		};
	return undefined;
}

/** Two clients with one token could not be told apart: each pair is a problem naming both. */
function sharedTokens(clients: ClientConfig[], shown: string): ConfigProblem[] {
	const owner = new Map<string, string>();
	const problems: ConfigProblem[] = [];
	for (const c of clients) {
		if (c.token === undefined) continue;
		const first = owner.get(c.token);
		if (first === undefined) {
			owner.set(c.token, c.name);
			continue;
		}
		const where = (n: string) =>
			n === DEFAULT_CLIENT ? "T3CODE_MCP_TOKEN" : `clients.${n}`;
		problems.push({
			file: c.name === DEFAULT_CLIENT ? undefined : shown,
			key: `clients.${c.name}`,
			expected: "a token no other client has",
			message: `has the same token as ${where(first)}; give each client its own token`,
		});
	}
	return problems;
}
