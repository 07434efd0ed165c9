/**
 * `[server] public_url` and `[approvals]` (CONTRACT.md "Approval links"): defaults, the env
 * variable, and each config error, exactly as the operator reads it. In-memory files.
 */
import { describe, expect, it } from "bun:test";
import { ConfigError } from "./config-error.ts";
import { loadConfig } from "./load-config.ts";

const BOSS = `[clients.boss]
token_env = "BOSS_TOKEN"
access = "read-only"
approve = true

[clients.agent]
token_env = "AGENT_TOKEN"
access = "approval-required"
`;
const ENV = {
	BOSS_TOKEN: "boss-token-0123456789",
	AGENT_TOKEN: "agent-token-012345678",
	PEOPLE_HOOK_TOKEN: "people-hook-token-0123",
};

const load = (toml: string, env: Record<string, string> = {}) =>
	loadConfig({
		env: { ...ENV, ...env },
		cwd: "/srv",
		readFile: async () => toml,
	});

async function errorOf(
	toml: string,
	env: Record<string, string> = {},
): Promise<string> {
	try {
		await load(toml, env);
	} catch (err) {
		expect(err).toBeInstanceOf(ConfigError);
		return (err as Error).message;
	}
	throw new Error("expected a ConfigError");
}

const APPROVALS = `[approvals]
link_client = "boss"
hook_url = "https://gateway.example/hooks/t3code-people"
`;

describe("[approvals]", () => {
	it("reads the defaults: an hour, accept and decline", async () => {
		const config = await load(
			`[server]\npublic_url = "https://t3mcp.example.ts.net/"\n${BOSS}${APPROVALS}hook_token_env = "PEOPLE_HOOK_TOKEN"\n`,
		);
		expect(config.server.publicUrl).toBe("https://t3mcp.example.ts.net");
		expect(config.approvals).toEqual({
			linkClient: "boss",
			hookUrl: "https://gateway.example/hooks/t3code-people",
			hookTokenEnv: "PEOPLE_HOOK_TOKEN",
			hookToken: "people-hook-token-0123",
			linkTtlS: 3600,
			decisions: ["accept", "decline"],
		});
	});

	it("takes T3CODE_MCP_PUBLIC_URL over the file", async () => {
		const config = await load(
			`[server]\npublic_url = "https://old.example"\n${BOSS}${APPROVALS}link_ttl_s = 600\ndecisions = ["accept", "accept_for_session", "decline"]\n`,
			{ T3CODE_MCP_PUBLIC_URL: "https://t3mcp.example.ts.net:8443" },
		);
		expect(config.server.publicUrl).toBe("https://t3mcp.example.ts.net:8443");
		expect(config.approvals?.linkTtlS).toBe(600);
		expect(config.approvals?.decisions).toEqual([
			"accept",
			"accept_for_session",
			"decline",
		]);
	});

	it("is absent without the table", async () => {
		expect((await load(BOSS)).approvals).toBeNull();
	});

	it("refuses an unknown link_client", async () => {
		expect(
			await errorOf(
				`[server]\npublic_url = "https://t3mcp.example.ts.net"\n${BOSS}[approvals]\nlink_client = "ghost"\nhook_url = "https://gw.example/h"\n`,
			),
		).toBe(
			't3code.toml: approvals.link_client: no client "ghost" is configured; add [clients.ghost] with approve = true, or name an existing approver',
		);
	});

	it("refuses a link_client without approve", async () => {
		expect(
			await errorOf(
				`[server]\npublic_url = "https://t3mcp.example.ts.net"\n${BOSS}[approvals]\nlink_client = "agent"\nhook_url = "https://gw.example/h"\n`,
			),
		).toBe(
			't3code.toml: approvals.link_client: client "agent" may not answer approvals (approve is false); set approve = true on it, or name an approver client',
		);
	});

	it("refuses [approvals] without public_url", async () => {
		expect(await errorOf(`${BOSS}${APPROVALS}`)).toBe(
			't3code.toml: approvals: approval links need [server] public_url (or T3CODE_MCP_PUBLIC_URL): the address people open them at, like "https://t3mcp.example.ts.net"',
		);
	});

	it("refuses a public_url with a path, a query, userinfo or another scheme", async () => {
		// A query's value may be a secret: the message shows the URL up to it.
		for (const url of [
			"https://t3mcp.example/base",
			"https://t3mcp.example/?x=1",
			"ftp://t3mcp.example",
		])
			expect(
				await errorOf(`[server]\npublic_url = ${JSON.stringify(url)}\n`),
			).toStartWith(
				't3code.toml: server.public_url: expected an http(s) origin without path, query or user:password@, like "https://t3mcp.example.ts.net", got "',
			);
		const withUser = await errorOf(
			`[server]\npublic_url = "https://me:pw@t3mcp.example"\n`,
		);
		expect(withUser).toStartWith("t3code.toml: server.public_url: ");
		expect(withUser).not.toContain("pw@");
		expect(
			await errorOf("", { T3CODE_MCP_PUBLIC_URL: "https://t3mcp.example/x" }),
		).toContain("T3CODE_MCP_PUBLIC_URL");
	});

	it("refuses a hook_url that is not http(s), never repeating it", async () => {
		const message = await errorOf(
			`[server]\npublic_url = "https://t3mcp.example.ts.net"\n${BOSS}[approvals]\nlink_client = "boss"\nhook_url = "gopher://gw.example/secret-path-0123456789"\n`,
		);
		expect(message).toStartWith(
			't3code.toml: approvals.hook_url: expected an http(s) URL like "https://gateway.example/hooks/t3code-people"',
		);
		expect(message).not.toContain("secret-path-0123456789");
	});

	it("names the keys [approvals] knows", async () => {
		expect(
			await errorOf(
				`[server]\npublic_url = "https://t3mcp.example.ts.net"\n${BOSS}${APPROVALS}ttl = 5\n`,
			),
		).toBe(
			"t3code.toml: approvals.ttl: unknown key; expected one of link_client, hook_url, hook_token_env, link_ttl_s, decisions",
		);
	});
});
