/**
 * `t3code-mcp stdio` (issue 12): the official client's StdioClientTransport spawns the real CLI
 * against the simulator. The same tool loop as over HTTP, XDG default paths, webhook delivery
 * from the state file's outbox, nothing but JSON-RPC on stdout, and the held-lock case
 * (in-memory state, no webhooks, said on stderr and in t3_machines).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { startServerProcess } from "../helpers/process.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import { callTool, until } from "../helpers/stack.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");

let sim: Sim;
let dir: string;
beforeAll(async () => {
	sim = await startSim({ stepMs: 5, coalesceMs: 5 });
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-stdio-"));
});
afterAll(async () => {
	await sim.stop();
	rmSync(dir, { recursive: true, force: true });
});

const configText = () =>
	`[machines.demo]\nurl = "${sim.url}"\ntoken_env = "T3_DEMO_TOKEN"\nprojects = ["*"]\nmodel = "claudeAgent/claude-opus-5"\n`;

/** HOME and XDG dirs of their own, the config at the XDG default; returns the env. */
function home(name: string, extra: Record<string, string> = {}) {
	const base = join(dir, name);
	const xdgConfig = join(base, "config");
	const xdgState = join(base, "state");
	mkdirSync(join(xdgConfig, "t3code-mcp"), { recursive: true });
	writeFileSync(join(xdgConfig, "t3code-mcp", "t3code.toml"), configText());
	return {
		env: {
			PATH: process.env.PATH ?? "",
			HOME: base,
			XDG_CONFIG_HOME: xdgConfig,
			XDG_STATE_HOME: xdgState,
			T3_DEMO_TOKEN: sim.token,
			T3CODE_MCP_LOG_LEVEL: "info",
			...extra,
		} as Record<string, string>,
		statePath: join(xdgState, "t3code-mcp", "t3code-mcp.sqlite"),
	};
}

interface Session {
	client: Client;
	stderr(): string;
	close(): Promise<void>;
}

/** The official client launching `t3code-mcp stdio` as Claude Desktop or Codex would. */
async function launch(env: Record<string, string>): Promise<Session> {
	const transport = new StdioClientTransport({
		command: process.execPath,
		args: ["run", ENTRY, "stdio"],
		env,
		cwd: "/", // a launched server's working directory is anything
		stderr: "pipe",
	});
	let err = "";
	transport.stderr?.on("data", (chunk: Buffer) => {
		err += chunk.toString();
	});
	const client = new Client({ name: "stdio-test", version: "1.0.0" });
	await client.connect(transport);
	return {
		client,
		stderr: () => err,
		close: () => client.close(),
	};
}

type Waited = { outcome: string; message: string | null; run_status: string };

describe("the tool loop over stdio, XDG default paths", () => {
	let receiver: Receiver;
	let session: Session;
	let statePath: string;
	beforeAll(async () => {
		receiver = startReceiver();
		const h = home("loop", {
			T3CODE_MCP_HOOK_URL: receiver.url,
			T3CODE_MCP_HOOK_SECRET: TEST_SECRET,
		});
		statePath = h.statePath;
		session = await launch(h.env);
	}, 30_000);
	afterAll(async () => {
		await session.close();
		await receiver.stop();
	});

	test("machines, projects, dispatch, wait, thread; origin is null; the webhook is delivered", async () => {
		const { client } = session;
		const names = (await client.listTools()).tools.map((t) => t.name);
		expect(names).toContain("t3_dispatch");

		const machines = await callTool<{
			machines: { name: string; state: string }[];
			note: string | null;
		}>(client, "t3_machines");
		expect(machines.data.machines).toMatchObject([
			{ name: "demo", state: "online" },
		]);
		expect(machines.data.note).toBeNull();

		const projects = await callTool<{ projects: { title: string }[] }>(
			client,
			"t3_projects",
			{ machine: "demo" },
		);
		expect(projects.data.projects.map((p) => p.title)).toContain("demo");

		const dispatched = await callTool<{
			thread_id: string;
			watched: boolean;
			origin: string | null;
		}>(client, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "say hello over stdio",
		});
		expect(dispatched.isError).toBe(false);
		expect(dispatched.data.watched).toBe(true);
		expect(dispatched.data.origin).toBeNull();
		const threadId = dispatched.data.thread_id;

		const waited = await callTool<Waited>(client, "t3_wait", {
			thread_id: threadId,
			timeout: 20,
		});
		expect(waited.data.outcome).toBe("completed");
		expect(waited.data.message).toBeString();

		const thread = await callTool<{ thread_id: string; status: string }>(
			client,
			"t3_thread",
			{ thread_id: threadId },
		);
		expect(thread.data.thread_id).toBe(threadId);

		// The state file is at the XDG default, and its outbox delivers as under `serve`.
		expect(existsSync(statePath)).toBe(true);
		await until(
			() => receiver.types().includes("thread.completed"),
			10_000,
			"the thread.completed webhook",
		);
		const delivery = receiver.deliveries.find(
			(d) => d.body.type === "thread.completed",
		);
		expect(delivery?.verified).toBe(true);
		expect(delivery?.body.thread_id).toBe(threadId);
		expect(delivery?.headers["x-conversation-origin"]).toBeUndefined();
	}, 30_000);
});

describe("stdout carries only JSON-RPC", () => {
	test("every stdout line is a JSON-RPC message; logs go to stderr; stdin EOF ends the process with 0", async () => {
		const h = home("pure", { T3CODE_MCP_LOG_LEVEL: "debug" });
		const proc = Bun.spawn([process.execPath, "run", ENTRY, "stdio"], {
			cwd: "/",
			env: h.env,
			stdin: "pipe",
			stdout: "pipe",
			stderr: "pipe",
		});
		const stderrText = new Response(proc.stderr).text();
		const send = (message: object) =>
			proc.stdin.write(`${JSON.stringify(message)}\n`);
		send({
			jsonrpc: "2.0",
			id: 1,
			method: "initialize",
			params: {
				protocolVersion: "2025-11-25",
				capabilities: {},
				clientInfo: { name: "raw", version: "1" },
			},
		});
		send({ jsonrpc: "2.0", method: "notifications/initialized" });
		send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
		send({
			jsonrpc: "2.0",
			id: 3,
			method: "tools/call",
			params: { name: "t3_machines", arguments: {} },
		});
		// A malformed initialize is answered -32602, briefly.
		send({ jsonrpc: "2.0", id: 4, method: "initialize" });
		await proc.stdin.flush();

		const timer = setTimeout(() => proc.kill(9), 20_000);
		const reader = proc.stdout.getReader();
		const decoder = new TextDecoder();
		const lines: string[] = [];
		let buffer = "";
		const answered = new Set<unknown>();
		const readSome = async () => {
			const { value, done } = await reader.read();
			if (done) return false;
			buffer += decoder.decode(value, { stream: true });
			for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
				const line = buffer.slice(0, i);
				buffer = buffer.slice(i + 1);
				lines.push(line);
				try {
					answered.add((JSON.parse(line) as { id?: unknown }).id);
				} catch {
					// not JSON: the assertions below report it
				}
			}
			return true;
		};
		while ([1, 2, 3, 4].some((id) => !answered.has(id)) && (await readSome()));
		// The client goes away: stdin ends, the server stops by itself.
		proc.stdin.end();
		while (await readSome());
		const code = await proc.exited;
		clearTimeout(timer);
		const err = await stderrText;
		expect(code).toBe(0);

		expect(buffer).toBe("");
		const messages = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
		for (const m of messages) expect(m.jsonrpc).toBe("2.0");
		const byId = new Map(messages.map((m) => [m.id, m]));
		expect(byId.has(1)).toBe(true);
		expect(byId.has(2)).toBe(true);
		expect(byId.get(3)).toMatchObject({
			result: { structuredContent: { note: null } },
		});
		expect(byId.get(4)).toMatchObject({
			error: { code: -32602 },
		});
		// The logs went to stderr as JSON lines.
		expect(err).toContain('"msg":"serving MCP on stdio"');
		expect(lines.join("\n")).not.toContain('"level"');
	}, 30_000);
});

describe("another process holds the state file", () => {
	test("stdio runs on in-memory state without webhooks, and says so on stderr and in t3_machines", async () => {
		const receiver = startReceiver();
		const h = home("held", {
			T3CODE_MCP_HOOK_URL: receiver.url,
			T3CODE_MCP_HOOK_SECRET: TEST_SECRET,
		});
		const serverDir = join(dir, "held-server");
		mkdirSync(serverDir, { recursive: true });
		const server = await startServerProcess({
			dir: serverDir,
			machines: [{ name: "demo", url: sim.url, token: sim.token }],
			statePath: h.statePath,
		});
		const session = await launch(h.env);
		try {
			const machines = await callTool<{
				machines: { name: string; state: string }[];
				note: string | null;
			}>(session.client, "t3_machines");
			expect(machines.data.machines[0]?.state).toBe("online");
			expect(machines.data.note).toContain(
				`The state file ${h.statePath} is in use by another t3code-mcp process (pid ${server.proc.pid}`,
			);
			expect(machines.data.note).toContain("in memory");
			expect(machines.data.note).toContain("no webhooks");
			expect(session.stderr()).toContain(
				`t3code-mcp: The state file ${h.statePath} is in use by another t3code-mcp process (pid ${server.proc.pid}`,
			);

			// The tools work as usual.
			const dispatched = await callTool<{ thread_id: string }>(
				session.client,
				"t3_dispatch",
				{ machine: "demo", project: "demo", prompt: "while the server runs" },
			);
			expect(dispatched.isError).toBe(false);
			const waited = await callTool<Waited>(session.client, "t3_wait", {
				thread_id: dispatched.data.thread_id,
				timeout: 20,
			});
			expect(waited.data.outcome).toBe("completed");
		} finally {
			await session.close();
			await server.kill();
		}
		// Nothing was posted from this session (its events stayed in memory).
		expect(receiver.attempts()).toBe(0);
		await receiver.stop();
	}, 30_000);
});
