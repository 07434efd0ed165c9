import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "./config-error.ts";
import { loadConfig } from "./load-config.ts";

let root: string;
let n = 0;
beforeAll(async () => {
	root = await mkdtemp(join(tmpdir(), "t3code-mcp-clients-"));
});
afterAll(async () => {
	await rm(root, { recursive: true, force: true });
});

const MAC = `[machines.mac]
url = "http://127.0.0.1:3773"
token_env = "T3_MAC_TOKEN"
projects = ["*"]
`;
const AGENT_TOKEN = "agent-token-0123456789";
const HUMAN_TOKEN = "human-token-0123456789";

async function load(toml: string, env: Record<string, string> = {}) {
	const dir = join(root, `case-${n++}`);
	await mkdir(dir);
	await writeFile(join(dir, "t3code.toml"), toml);
	return loadConfig({ env, cwd: dir });
}

async function errorOf(toml: string, env: Record<string, string> = {}) {
	try {
		await load(toml, env);
	} catch (err) {
		expect(err).toBeInstanceOf(ConfigError);
		return (err as Error).message;
	}
	throw new Error("expected a ConfigError");
}

describe("[clients.<name>]", () => {
	it("reads each client with its defaults, and T3CODE_MCP_TOKEN as the full-rights client default", async () => {
		const config = await load(
			`${MAC}
[clients.agent]
token_env = "AGENT_TOKEN"
access = "approval-required"
projects = ["web"]
max_active_runs = 1

[clients.human]
token_env = "HUMAN_TOKEN"
access = "read-only"
machines = ["mac"]
approve = true
`,
			{
				AGENT_TOKEN,
				HUMAN_TOKEN,
				T3CODE_MCP_TOKEN: "server-token-0123456789",
			},
		);
		expect(config.clients).toEqual([
			{
				name: "default",
				tokenEnv: null,
				tokenFile: null,
				token: "server-token-0123456789",
				access: "full-access",
				machines: ["*"],
				projects: ["*"],
				approve: true,
				maxActiveRuns: null,
			},
			{
				name: "agent",
				tokenEnv: "AGENT_TOKEN",
				tokenFile: null,
				token: AGENT_TOKEN,
				access: "approval-required",
				machines: ["*"],
				projects: ["web"],
				approve: false,
				maxActiveRuns: 1,
			},
			{
				name: "human",
				tokenEnv: "HUMAN_TOKEN",
				tokenFile: null,
				token: HUMAN_TOKEN,
				access: "read-only",
				machines: ["mac"],
				projects: ["*"],
				approve: true,
				maxActiveRuns: null,
			},
		]);
		expect(config.server.auditDays).toBe(90);
	});

	it("no [clients.*]: no clients, whatever T3CODE_MCP_TOKEN is (the bearer stays as before)", async () => {
		const config = await load(MAC, {
			T3CODE_MCP_TOKEN: "server-token-0123456789",
		});
		expect(config.clients).toEqual([]);
		expect(config.server.token).toBe("server-token-0123456789");
	});

	it("a token_file client reads its file", async () => {
		const dir = join(root, `file-${n++}`);
		await mkdir(dir);
		await writeFile(join(dir, "agent.token"), `${AGENT_TOKEN}\n`);
		await writeFile(
			join(dir, "t3code.toml"),
			`${MAC}\n[clients.agent]\ntoken_file = "agent.token"\naccess = "auto"\n`,
		);
		const config = await loadConfig({ env: {}, cwd: dir });
		expect(config.clients[0]?.token).toBe(AGENT_TOKEN);
		expect(config.clients[0]?.tokenFile).toBe(join(dir, "agent.token"));
	});

	it("an unknown level names the file, the client and the key", async () => {
		expect(
			await errorOf(
				`${MAC}\n[clients.agent]\ntoken_env = "AGENT_TOKEN"\naccess = "admin"\n`,
				{ AGENT_TOKEN },
			),
		).toBe(
			't3code.toml: clients.agent.access: expected one of "read-only", "approval-required", "auto-accept-edits", "auto", "full-access", got "admin"',
		);
	});

	it("a missing level, an unknown key and a token in the file are each named", async () => {
		const message = await errorOf(
			`${MAC}\n[clients.agent]\ntoken_env = "AGENT_TOKEN"\ntoken = "x"\nreach = ["*"]\n`,
			{ AGENT_TOKEN },
		);
		expect(message).toContain(
			"t3code.toml: clients.agent.access: missing; expected one of",
		);
		expect(message).toContain(
			"t3code.toml: clients.agent.reach: unknown key; expected one of token_env, token_file, access, machines, projects, approve, max_active_runs",
		);
		expect(message).toContain(
			"t3code.toml: clients.agent.token: not allowed in the config file",
		);
		expect(message).not.toContain('"x"');
	});

	it("a token shorter than 16 characters is refused without showing it", async () => {
		const message = await errorOf(
			`${MAC}\n[clients.agent]\ntoken_env = "AGENT_TOKEN"\naccess = "auto"\n`,
			{ AGENT_TOKEN: "short-secret" },
		);
		expect(message).toBe(
			"t3code.toml: clients.agent.token_env: the token in AGENT_TOKEN has 12 characters; expected a token of 16 or more characters (generate one with `openssl rand -hex 32`)",
		);
	});

	it("two clients with one token are refused, naming both and not the token", async () => {
		const message = await errorOf(
			`${MAC}
[clients.agent]
token_env = "AGENT_TOKEN"
access = "auto"
[clients.twin]
token_env = "TWIN_TOKEN"
access = "read-only"
`,
			{ AGENT_TOKEN, TWIN_TOKEN: AGENT_TOKEN },
		);
		expect(message).toBe(
			"t3code.toml: clients.twin: has the same token as clients.agent; give each client its own token",
		);
	});

	it("a client sharing T3CODE_MCP_TOKEN is refused", async () => {
		expect(
			await errorOf(
				`${MAC}\n[clients.agent]\ntoken_env = "AGENT_TOKEN"\naccess = "auto"\n`,
				{ AGENT_TOKEN, T3CODE_MCP_TOKEN: AGENT_TOKEN },
			),
		).toBe(
			"t3code.toml: clients.agent: has the same token as T3CODE_MCP_TOKEN; give each client its own token",
		);
	});

	it("a client token equal to a machine's token is refused, naming both and not the token", async () => {
		const message = await errorOf(
			`${MAC}\n[clients.agent]\ntoken_env = "AGENT_TOKEN"\naccess = "auto"\n`,
			{ AGENT_TOKEN, T3_MAC_TOKEN: AGENT_TOKEN },
		);
		expect(message).toBe(
			't3code.toml: clients.agent.token_env: the token in AGENT_TOKEN is the T3 token of machine "mac" (machines.mac); give the client a token of its own (`openssl rand -hex 32`)',
		);
		expect(message).not.toContain(AGENT_TOKEN);
	});

	it("a machine token read from a file counts too, and so does T3CODE_MCP_TOKEN beside clients", async () => {
		const dir = join(root, `machine-file-${n++}`);
		await mkdir(dir);
		await writeFile(join(dir, "mac.token"), `${AGENT_TOKEN}\n`, {
			mode: 0o600,
		});
		await writeFile(
			join(dir, "t3code.toml"),
			`[machines.mac]\nurl = "http://127.0.0.1:3773"\ntoken_file = "mac.token"\nprojects = ["*"]\n[clients.agent]\ntoken_env = "AGENT_TOKEN"\naccess = "auto"\n`,
		);
		const message = await loadConfig({
			env: { AGENT_TOKEN: HUMAN_TOKEN, T3CODE_MCP_TOKEN: AGENT_TOKEN },
			cwd: dir,
		}).then(
			() => "loaded",
			(err: Error) => err.message,
		);
		expect(message).toBe(
			'T3CODE_MCP_TOKEN: the token of client default is the T3 token of machine "mac" (machines.mac); give the client a token of its own (`openssl rand -hex 32`)',
		);
	});

	it("a client token holding whitespace or a control character is refused without showing it", async () => {
		for (const token of [
			"agent-token 0123456789",
			"agent-token\t0123456789",
			"agent-token\u00a00123456789",
			"agent-token\u001b[0123456789",
			"agent-token\u007f0123456789",
		]) {
			const message = await errorOf(
				`${MAC}\n[clients.agent]\ntoken_env = "AGENT_TOKEN"\naccess = "auto"\n`,
				{ AGENT_TOKEN: token },
			);
			expect(message).toBe(
				"t3code.toml: clients.agent.token_env: the token in AGENT_TOKEN holds whitespace or control characters; expected a token without whitespace or control characters (generate one with `openssl rand -hex 32`)",
			);
			expect(message).not.toContain("0123456789");
		}
	});

	it("a token file's inner whitespace names the file", async () => {
		const dir = join(root, `space-file-${n++}`);
		await mkdir(dir);
		await writeFile(join(dir, "agent.token"), "agent token 0123456789\n", {
			mode: 0o600,
		});
		await writeFile(
			join(dir, "t3code.toml"),
			`${MAC}\n[clients.agent]\ntoken_file = "agent.token"\naccess = "auto"\n`,
		);
		const message = await loadConfig({ env: {}, cwd: dir }).then(
			() => "loaded",
			(err: Error) => err.message,
		);
		expect(message).toBe(
			`t3code.toml: clients.agent.token_file: the token in ${join(dir, "agent.token")} holds whitespace or control characters; expected a token without whitespace or control characters (generate one with \`openssl rand -hex 32\`)`,
		);
	});

	it("a bad client name and a bad machine pattern are named", async () => {
		const message = await errorOf(
			`${MAC}\n[clients.Agent]\ntoken_env = "AGENT_TOKEN"\naccess = "auto"\n[clients.ok]\ntoken_env = "OK_TOKEN"\naccess = "auto"\nmachines = []\n`,
		);
		expect(message).toContain(
			"t3code.toml: clients.Agent: expected a client name",
		);
		expect(message).toContain(
			"t3code.toml: clients.ok.machines: expected a non-empty array of fnmatch patterns on machine names",
		);
	});
});
