/**
 * `stdio` as a named client (CONTRACT.md "Clients and rights"): `T3CODE_MCP_CLIENT` picks the
 * `[clients.<name>]` whose rights and reach the local session has; no token is needed. An
 * unknown name is a configuration error naming the clients there are. A call above its level is
 * the `capability_denied` tool error HTTP gives, audited with via "stdio" (CONTRACT.md "Trust
 * round three").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { callTool } from "../helpers/stack.ts";

const ENTRY = join(import.meta.dir, "../../src/index.ts");

let sim: Sim;
let dir: string;
let config: string;
beforeAll(async () => {
	sim = await startSim({ stepMs: 5, coalesceMs: 5 });
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-stdio-client-"));
	config = join(dir, "t3code.toml");
	writeFileSync(
		config,
		`[server]
state = "state.sqlite"

[machines.demo]
url = "${sim.url}"
token_env = "T3_DEMO_TOKEN"
projects = ["*"]

[clients.reader]
token_env = "READER_TOKEN"
access = "read-only"
`,
	);
});
afterAll(async () => {
	await sim.stop();
	rmSync(dir, { recursive: true, force: true });
});

const env = (client: string) => ({
	PATH: process.env.PATH ?? "",
	HOME: dir,
	T3CODE_MCP_CONFIG: config,
	T3CODE_MCP_CLIENT: client,
	T3_DEMO_TOKEN: sim.token,
	T3CODE_MCP_LOG_LEVEL: "error",
});

test("stdio as T3CODE_MCP_CLIENT=reader lists only the read tools; a call above its level is capability_denied, audited via stdio", async () => {
	const client = new Client({ name: "stdio-client-test", version: "1.0.0" });
	await client.connect(
		new StdioClientTransport({
			command: process.execPath,
			args: [ENTRY, "stdio"],
			env: env("reader"),
			stderr: "pipe",
		}),
	);
	try {
		const names = (await client.listTools()).tools.map((t) => t.name);
		expect(names).not.toContain("t3_dispatch");
		expect(names).toContain("t3_threads");
		const { data } = await callTool<{ client: { name: string } }>(
			client,
			"t3_machines",
		);
		expect(data.client.name).toBe("reader");
		const before = sim.threadIds().length;
		const dispatch = await callTool(client, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "hi",
			idempotency_key: "stdio-key-1",
		});
		expect(dispatch.isError).toBe(true);
		expect(dispatch.text).toStartWith("capability_denied:");
		expect(dispatch.text).toContain('client "reader" (access read-only)');
		const remove = await callTool(client, "t3_delete", { thread_id: "t_1" });
		expect(remove.isError).toBe(true);
		expect(remove.text).toStartWith("capability_denied:");
		expect(remove.text).toContain("full-access");
		expect(sim.threadIds().length).toBe(before);
	} finally {
		await client.close();
	}
	const audit = Bun.spawnSync(
		[process.execPath, ENTRY, "audit", "--json", "--client", "reader"],
		{ env: env("reader") },
	);
	expect(audit.exitCode, audit.stderr.toString()).toBe(0);
	const rows = audit.stdout
		.toString()
		.trim()
		.split("\n")
		.map((l) => JSON.parse(l) as Record<string, unknown>);
	expect(rows).toContainEqual(
		expect.objectContaining({
			client: "reader",
			tool: "t3_dispatch",
			result: "capability_denied",
			idempotency_key: "stdio-key-1",
			via: "stdio",
			detail: null,
		}),
	);
	expect(rows).toContainEqual(
		expect.objectContaining({
			tool: "t3_delete",
			thread_id: "t_1",
			result: "capability_denied",
			via: "stdio",
		}),
	);
	// t3_machines is not audited.
	expect(rows.some((r) => r.tool === "t3_machines")).toBe(false);
});

test("an unknown T3CODE_MCP_CLIENT is a configuration error naming the clients", () => {
	const run = Bun.spawnSync([process.execPath, ENTRY, "stdio"], {
		env: env("nobody"),
		stdin: "pipe",
	});
	expect(run.exitCode).toBe(3);
	expect(run.stderr.toString()).toContain(
		'T3CODE_MCP_CLIENT: no client "nobody"',
	);
	expect(run.stderr.toString()).toContain("one of reader");
});
