/**
 * The bad-input sweep (issue 6): a table of malformed config files, tool arguments and T3
 * responses. Each must give a clear error (naming the file and key, the argument, or the
 * machine and why), the server must keep serving (`t3_machines` and `/healthz`), and nothing
 * may be written wrong (`PRAGMA integrity_check` ok, no stray rows). Unknown fields and enum
 * members are tolerated, never fatal.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { ConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { callTool, type Stack, startStack, until } from "../helpers/stack.ts";
import {
	descriptor,
	exits,
	type HostileOptions,
	type HostileSocket,
	type HostileT3,
	PROJECT,
	session,
	shellSnapshot,
	startHostileT3,
	THREAD_ID,
	threadDetail,
	threadShell,
} from "./hostile-t3.ts";

// ---------------------------------------------------------------------------------------------
// Shared checks

interface RowCounts {
	threads: number;
	dispatches: number;
	events: number;
}

/** Opens the state file read-only (the server keeps it open) and checks it. */
function inspectState(path: string): RowCounts & { integrity: string } {
	const db = new Database(path, { readonly: true });
	try {
		const integrity = (
			db.query("PRAGMA integrity_check").get() as { integrity_check: string }
		).integrity_check;
		const count = (table: string) =>
			(db.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
		return {
			integrity,
			threads: count("threads"),
			dispatches: count("dispatches"),
			// Thread events only: a machine T3 refuses raises its own `machine.unauthorized`
			// (keyed `machine/<name>`), which is the right answer to a hostile session.
			events: (
				db
					.query(
						"SELECT COUNT(*) AS n FROM events WHERE thread_id NOT LIKE 'machine/%'",
					)
					.get() as { n: number }
			).n,
		};
	} finally {
		db.close();
	}
}

/** The server still answers: a tool call succeeds and /healthz is 200. */
async function expectServing(stack: Stack, client: Client): Promise<void> {
	const machines = await callTool<{ machines: unknown[] }>(
		client,
		"t3_machines",
	);
	expect(machines.isError).toBe(false);
	expect(machines.data.machines.length).toBeGreaterThan(0);
	const health = await fetch(`${stack.server.url}/healthz`);
	expect(health.status).toBe(200);
	await health.body?.cancel();
}

function expectClean(stack: Stack, rows: RowCounts): void {
	const state = inspectState(stack.statePath);
	expect(state.integrity).toBe("ok");
	expect({
		threads: state.threads,
		dispatches: state.dispatches,
		events: state.events,
	}).toEqual(rows);
}

const NO_ROWS: RowCounts = { threads: 0, dispatches: 0, events: 0 };

/** `it`, or `it.failing` with the bug in its name while a known bug stands. */
function itUnlessBug(
	name: string,
	bug: string | undefined,
	body: () => Promise<void>,
	timeout?: number,
): void {
	(bug ? it.failing : it)(bug ? `${name} [BUG: ${bug}]` : name, body, timeout);
}

// ---------------------------------------------------------------------------------------------
// 1. Config files

const MAC = `[machines.mac]
url = "http://100.64.0.5:3773"
token_env = "T3_MAC_TOKEN"
projects = ["*"]
`;

interface ConfigCase {
	name: string;
	toml: string;
	env?: Record<string, string>;
	/** Every fragment must appear in the message: the file (or env var) and the key. */
	says: string[];
}

const CONFIG_CASES: ConfigCase[] = [
	{
		name: "truncated TOML",
		toml: '[machines.mac\nurl = "http://x"',
		says: ["t3code.toml", "TOML syntax error"],
	},
	{
		name: "binary garbage",
		toml: "\u0000\u0001\u00ff\u0002garbage",
		says: ["t3code.toml", "TOML syntax error"],
	},
	{
		name: "same machine table twice",
		toml: MAC + MAC,
		says: ["t3code.toml", "mac"],
	},
	{
		name: "url of the wrong type",
		toml: MAC.replace('"http://100.64.0.5:3773"', "5"),
		says: ["t3code.toml", "machines.mac.url", "got 5"],
	},
	{
		name: "url with a path",
		toml: MAC.replace("http://100.64.0.5:3773", "http://x:1/path?q=1"),
		says: ["t3code.toml", "machines.mac.url", "without path"],
	},
	{
		name: "empty url",
		toml: MAC.replace("http://100.64.0.5:3773", ""),
		says: ["t3code.toml", "machines.mac.url"],
	},
	{
		name: "neither token_env nor token_file",
		toml: '[machines.mac]\nurl = "http://x:1"\nprojects = ["*"]\n',
		says: ["t3code.toml", "machines.mac", "neither token_env nor token_file"],
	},
	{
		name: "both token_env and token_file",
		toml: `${MAC}token_file = "mac.token"\n`,
		says: ["t3code.toml", "machines.mac", "both token_env and token_file"],
	},
	{
		name: "token_env not a variable name",
		toml: MAC.replace('"T3_MAC_TOKEN"', '"my token"'),
		says: ["t3code.toml", "machines.mac.token_env", '"my token"'],
	},
	{
		name: "projects is a string",
		toml: MAC.replace('["*"]', '"*"'),
		says: ["t3code.toml", "machines.mac.projects"],
	},
	{
		name: "projects is empty",
		toml: MAC.replace('["*"]', "[]"),
		says: ["t3code.toml", "machines.mac.projects", "empty"],
	},
	{
		name: "projects holds a number",
		toml: MAC.replace('["*"]', "[1]"),
		says: ["t3code.toml", "machines.mac.projects[0]"],
	},
	{
		name: "model without a provider",
		toml: `${MAC}model = "nomodel"\n`,
		says: ["t3code.toml", "machines.mac.model", '"nomodel"'],
	},
	{
		name: "options nested too deep",
		toml: `${MAC}[machines.mac.options]\neffort = { a = 1 }\n`,
		says: ["t3code.toml", "machines.mac.options.effort"],
	},
	{
		name: "machines is a string",
		toml: 'machines = "x"\n',
		says: ["t3code.toml", "machines"],
	},
	{
		name: "machine name with spaces",
		toml: '[machines."bad name!"]\nurl = "http://x:1"\ntoken_env = "T"\nprojects = ["*"]\n',
		says: ["t3code.toml", "bad name!"],
	},
	{
		name: "port out of range",
		toml: `[server]\nport = 70000\n${MAC}`,
		says: ["t3code.toml", "server.port", "70000"],
	},
	{
		name: "port as a string",
		toml: `[server]\nport = "80"\n${MAC}`,
		says: ["t3code.toml", "server.port"],
	},
	{
		name: "negative wait timeout",
		toml: `[server]\nwait_timeout_s = -1\n${MAC}`,
		says: ["t3code.toml", "server.wait_timeout_s"],
	},
	{
		name: "unknown log level",
		toml: `[server]\nlog_level = "loud"\n${MAC}`,
		says: ["t3code.toml", "server.log_level", '"loud"'],
	},
	{
		name: "hook_url not a URL",
		toml: `[server]\nhook_url = "not a url"\n${MAC}`,
		says: ["t3code.toml", "server.hook_url"],
	},
	{
		name: "state of the wrong type",
		toml: `[server]\nstate = 5\n${MAC}`,
		says: ["t3code.toml", "server.state"],
	},
	{
		name: "unknown top-level key",
		toml: `colour = "blue"\n${MAC}`,
		says: ["t3code.toml", "colour", "unknown key"],
	},
	{
		name: "env port not a number",
		toml: MAC,
		env: { T3CODE_MCP_PORT: "abc" },
		says: ["T3CODE_MCP_PORT", '"abc"'],
	},
	{
		name: "env hook secret malformed",
		toml: MAC,
		env: { T3CODE_MCP_HOOK_URL: "http://x/y", T3CODE_MCP_HOOK_SECRET: "short" },
		says: ["T3CODE_MCP_HOOK_SECRET", "whsec_"],
	},
	{
		name: "named config file missing",
		toml: MAC,
		env: { T3CODE_MCP_CONFIG: "/nonexistent/x.toml" },
		says: ["/nonexistent/x.toml", "T3CODE_MCP_CONFIG"],
	},
];

describe("bad config files: the error names the file and the key", () => {
	let root: string;
	let n = 0;
	beforeAll(async () => {
		root = await mkdtemp(join(tmpdir(), "t3code-mcp-sweep-config-"));
	});
	afterAll(async () => {
		await rm(root, { recursive: true, force: true });
	});

	for (const c of CONFIG_CASES) {
		it(c.name, async () => {
			const dir = join(root, `case-${n++}`);
			await mkdir(dir);
			await writeFile(join(dir, "t3code.toml"), c.toml);
			let error: unknown;
			try {
				await loadConfig({ env: c.env ?? {}, cwd: dir });
			} catch (err) {
				error = err;
			}
			expect(error).toBeInstanceOf(ConfigError);
			for (const fragment of c.says)
				expect((error as Error).message).toContain(fragment);
		});
	}
});

// ---------------------------------------------------------------------------------------------
// 2. Tool arguments, through the MCP client against a stack

interface ToolCase {
	tool: string;
	args: Record<string, unknown>;
	/** What the error text must say (the argument and why). */
	says: RegExp;
	/** A known bug: runs as `it.failing` until fixed (then flip it to a normal case). */
	bug?: string;
}

const BIG = "x".repeat(200_001);

const TOOL_CASES: ToolCase[] = [
	{ tool: "t3_projects", args: {}, says: /machine: .*expected string/ },
	{ tool: "t3_projects", args: { machine: "" }, says: /machine: Too small/ },
	{
		tool: "t3_projects",
		args: { machine: 5 },
		says: /machine: .*received number/,
	},
	{
		tool: "t3_projects",
		args: { machine: "nope" },
		says: /Unknown machine "nope"\. Configured machines: demo/,
	},
	{
		tool: "t3_projects",
		args: { machine: BIG },
		says: /machine: Too big/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo" },
		says: /prompt: .*expected string/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "   " },
		says: /prompt: must not be empty/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: BIG },
		says: /prompt: 200001 characters is over the limit of 100000/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: ["hi"] },
		says: /prompt: .*received array/,
	},
	{
		tool: "t3_dispatch",
		args: { prompt: "hi" },
		says: /machine: required to start a new thread \(one of: demo\)/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", prompt: "hi" },
		says: /project: required/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "nope", prompt: "hi" },
		says: /Unknown project "nope" on machine "demo"/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "hi", model: "bad" },
		says: /model: expected "<providerInstance>\/<model>"/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "hi", title: BIG },
		says: /title: Too big/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "\u0000\u0007 \u200b\n" },
		says: /prompt: must not be empty \(or only whitespace and control characters\)/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "hi", title: "a\nb" },
		says: /title: must not contain control characters \(U\+000A at position 1\)/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "hi", title: "a\u001bb" },
		says: /title: must not contain control characters \(U\+001B/,
	},
	{
		tool: "t3_dispatch",
		args: {
			machine: "demo",
			project: "demo",
			prompt: "hi",
			idempotency_key: "   ",
		},
		says: /idempotency_key: must not be blank or only whitespace/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "hi", request_id: "\t" },
		says: /request_id: must not be blank or only whitespace/,
	},
	{
		tool: "t3_manage",
		args: { thread_id: "x", action: "rename", title: "new\r\ntitle" },
		says: /title: must not contain control characters \(U\+000D at position 3\)/,
	},
	{
		tool: "t3_manage",
		args: { thread_id: "x", action: "archive", idempotency_key: " " },
		says: /idempotency_key: must not be blank or only whitespace/,
	},
	{
		tool: "t3_delete",
		args: { thread_id: "x", idempotency_key: "\n\t " },
		says: /idempotency_key: must not be blank or only whitespace/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "hi", watch: "yes" },
		says: /watch: .*expected boolean/,
	},
	{
		tool: "t3_dispatch",
		args: { machine: "demo", project: "demo", prompt: "hi", request_id: "" },
		says: /request_id: Too small/,
	},
	{
		tool: "t3_dispatch",
		args: { thread_id: "no-such-thread", prompt: "hi" },
		says: /Thread "no-such-thread" was not found on any machine/,
	},
	{
		tool: "t3_wait",
		args: {},
		says: /Pass exactly one of thread_id .* or thread_ids/,
	},
	{
		tool: "t3_wait",
		args: { thread_id: "a", thread_ids: ["b"] },
		says: /Pass exactly one of thread_id/,
	},
	{ tool: "t3_wait", args: { thread_ids: [] }, says: /thread_ids: Too small/ },
	{
		tool: "t3_wait",
		args: { thread_ids: Array.from({ length: 51 }, (_, i) => `t${i}`) },
		says: /thread_ids: Too big/,
	},
	{
		tool: "t3_wait",
		args: { thread_id: "a", timeout: -1 },
		says: /timeout: Too small/,
	},
	{
		tool: "t3_wait",
		args: { thread_id: "a", timeout: "soon" },
		says: /timeout: .*expected number/,
	},
	{
		tool: "t3_wait",
		args: { thread_id: "nope", timeout: 0 },
		says: /Thread "nope" was not found on any machine/,
	},
	{ tool: "t3_thread", args: {}, says: /thread_id: .*expected string/ },
	{ tool: "t3_thread", args: { thread_id: "" }, says: /thread_id: Too small/ },
	{
		tool: "t3_thread",
		args: { thread_id: "x", turns: -1 },
		says: /turns: Too small/,
	},
	{
		tool: "t3_thread",
		args: { thread_id: "x", turns: "all" },
		says: /turns: .*expected number/,
	},
	{
		tool: "t3_thread",
		args: { thread_id: BIG },
		says: /thread_id: Too big/,
	},
	{ tool: "t3_answer", args: {}, says: /thread_id: .*expected string/ },
	{
		tool: "t3_answer",
		args: { thread_id: "x", decision: "maybe" },
		says: /decision: Invalid option: expected one of "accept"\|"accept_for_session"\|"accept_always"\|"decline"\|"cancel"/,
	},
	{
		tool: "t3_answer",
		args: { thread_id: "x", answers: "Red" },
		says: /answers: .*expected record/,
	},
	{
		tool: "t3_answer",
		args: { thread_id: "x", answers: { color: 5 } },
		says: /answers\.color/,
	},
	{
		tool: "t3_answer",
		args: { thread_id: "x", answers: { color: "Red" } },
		says: /Thread "x" was not found on any machine/,
	},
	{ tool: "t3_interrupt", args: {}, says: /thread_id: .*expected string/ },
	{
		tool: "t3_interrupt",
		args: { thread_id: 42 },
		says: /thread_id: .*received number/,
	},
	{
		tool: "t3_interrupt",
		args: { thread_id: "x" },
		says: /Thread "x" was not found on any machine/,
	},
	{
		tool: "t3_watch",
		args: { thread_id: "x" },
		says: /Pass both thread_id and enabled/,
	},
	{
		tool: "t3_watch",
		args: { enabled: true },
		says: /Pass both thread_id and enabled/,
	},
	{
		tool: "t3_watch",
		args: { thread_id: "x", enabled: "yes" },
		says: /enabled: .*expected boolean/,
	},
	{
		tool: "t3_watch",
		args: { thread_id: "x", enabled: true },
		says: /Thread "x" was not found on any machine/,
	},
];

describe("bad tool arguments: an isError result naming the argument", () => {
	let stack: Stack;
	let client: Client;
	beforeAll(async () => {
		stack = await startStack({ machines: [{ name: "demo" }] });
		client = await stack.client();
		await until(
			() =>
				stack.server.services.fleet.get("demo")?.machine.status().state ===
				"online",
			10_000,
			"demo online",
		);
	});
	afterAll(async () => {
		await stack.stop();
	});

	for (const c of TOOL_CASES) {
		const shown = JSON.stringify(c.args, (_, v) =>
			typeof v === "string" && v.length > 40 ? `<${v.length} chars>` : v,
		);
		const title = `${c.tool} ${shown.length > 90 ? `${shown.slice(0, 90)}…` : shown}`;
		itUnlessBug(title, c.bug, async () => {
			const result = await callTool(client, c.tool, c.args);
			expect(result.isError).toBe(true);
			expect(result.text).toMatch(c.says);
			// Bounded: an oversized argument is not echoed back in full.
			expect(result.text.length).toBeLessThan(2_000);
			await expectServing(stack, client);
		});
	}

	it("t3_machines refuses unknown arguments (issue 16: never silently ignored)", async () => {
		const result = await callTool(client, "t3_machines", { colour: "blue" });
		expect(result.isError).toBe(true);
		expect(result.text).toContain(
			'unknown argument "colour"; valid arguments: none',
		);
	});

	it("after every bad call: integrity ok and no rows written", () => {
		expectClean(stack, NO_ROWS);
	});
});

// ---------------------------------------------------------------------------------------------
// 3. Malformed T3 responses, from a hostile fake T3 server

type StateExpectation =
	| { state: "online" }
	| {
			state: "offline" | "incompatible" | "unauthorized";
			reason: RegExp;
	  };

interface T3Case {
	name: string;
	/** A known bug: runs as `it.failing` until fixed. */
	bug?: string;
	hostile: HostileOptions;
	expect: StateExpectation;
	/** Runs once the machine reached the expected state (tool calls, protocol checks). */
	after?: (ctx: T3Ctx) => Promise<void>;
	rows?: RowCounts;
}

interface T3Ctx {
	stack: Stack;
	client: Client;
	hostile: HostileT3;
	thread(id: string): unknown;
}

/** A thread the server sends after the faulty frames: seeing it proves the client kept reading. */
const MARKER = "t-marker";
function sendMarker(ws: HostileSocket, requestId: string, sequence = 11) {
	ws.chunk(requestId, [
		{
			kind: "thread.updated",
			sequence,
			location: "active",
			thread: threadShell({ id: MARKER, title: "marker" }),
		},
	]);
}

/** Answers subscribeShell well, then sends `frames` (raw text), then the marker. */
function afterSync(frames: (requestId: string) => string[]): HostileOptions {
	return {
		onRequest(tag, id, _payload, ws) {
			if (tag !== "orchestration.subscribeShell") return false;
			ws.goodSubscribe(id);
			for (const frame of frames(id)) ws.sendText(frame);
			sendMarker(ws, id);
			return true;
		},
	};
}

/** The shell came from the socket's snapshot (the HTTP read failed). */
const socketShellSeen = async ({ thread }: T3Ctx) => {
	await until(() => thread(THREAD_ID) !== undefined, 5_000, "shell thread");
};

const markerSeen = async ({ thread }: T3Ctx) => {
	await until(() => thread(MARKER) !== undefined, 5_000, "marker thread");
};

const http =
	(route: string, respond: () => Response): HostileOptions["http"] =>
	(r) =>
		r === route ? respond() : undefined;

const answerLaunch = (exit: unknown): HostileOptions => ({
	onRequest(tag, id, _payload, ws) {
		if (tag !== "orchestration.launchThread") return false;
		ws.exit(id, exit);
		return true;
	},
});

/** Checks, once the machine is up, that calling `tool` with `args` is an error matching `says`. */
const toolFails =
	(tool: string, args: Record<string, unknown>, says: RegExp) =>
	async ({ client }: T3Ctx) => {
		const r = await callTool(client, tool, args);
		expect(r.isError).toBe(true);
		expect(r.text).toMatch(says);
	};

const NEW_THREAD = { machine: "hostile", project: "demo", prompt: "hello" };

const T3_CASES: T3Case[] = [
	// --- HTTP: descriptor, session, ticket
	{
		name: "descriptor is not JSON",
		hostile: {
			http: http("descriptor", () => new Response("<html>oops</html>")),
		},
		expect: { state: "offline", reason: /hostile.*did not answer JSON/ },
	},
	{
		name: "descriptor is truncated JSON",
		hostile: {
			http: http(
				"descriptor",
				() => new Response('{"orchestrationProtocolVersion": 2, "serverVer'),
			),
		},
		expect: { state: "offline", reason: /hostile.*did not answer JSON/ },
	},
	{
		name: "descriptor answers 500",
		hostile: {
			http: http("descriptor", () => new Response("kaput", { status: 500 })),
		},
		expect: { state: "offline", reason: /hostile.*failed with 500.*kaput/ },
	},
	{
		name: "descriptor is a JSON array",
		hostile: { http: http("descriptor", () => Response.json([1, 2])) },
		expect: {
			state: "offline",
			reason: /hostile.*malformed environment descriptor/,
		},
	},
	{
		name: "descriptor protocol version of the wrong type",
		hostile: {
			http: http("descriptor", () =>
				Response.json(descriptor({ orchestrationProtocolVersion: "2" })),
			),
		},
		expect: { state: "incompatible", reason: /hostile.*protocol 2.*required/ },
	},
	{
		name: "descriptor from a future protocol",
		hostile: {
			http: http("descriptor", () =>
				Response.json(descriptor({ orchestrationProtocolVersion: 3 })),
			),
		},
		expect: {
			state: "incompatible",
			reason: /hostile.*orchestration protocol 3/,
		},
	},
	{
		name: "descriptor with unknown fields and a 5 MB label is tolerated",
		hostile: {
			http: http("descriptor", () =>
				Response.json(
					descriptor({
						label: "L".repeat(5 * 1024 * 1024),
						capabilities: { teleport: true },
						futureField: { nested: [1, 2, 3] },
					}),
				),
			),
		},
		expect: { state: "online" },
	},
	{
		name: "session answers 500",
		hostile: { http: http("session", () => new Response("", { status: 500 })) },
		expect: {
			state: "offline",
			reason: /hostile.*api\/auth\/session failed with 500/,
		},
	},
	{
		name: "session authenticated of the wrong type",
		hostile: {
			http: http("session", () =>
				Response.json(session({ authenticated: "yes" })),
			),
		},
		expect: { state: "unauthorized", reason: /hostile.*token rejected/ },
	},
	{
		name: "session scopes of the wrong type",
		hostile: {
			http: http("session", () =>
				Response.json(session({ scopes: "orchestration:read" })),
			),
		},
		expect: { state: "unauthorized", reason: /hostile.*lacks scope/ },
	},
	{
		name: "ticket missing from the ticket response",
		hostile: {
			http: http("ticket", () => Response.json({ expiresAt: 5 })),
		},
		expect: {
			state: "offline",
			reason: /hostile.*malformed websocket ticket/,
		},
	},
	{
		name: "ticket response is not JSON",
		hostile: { http: http("ticket", () => new Response("ticket=abc")) },
		expect: { state: "offline", reason: /hostile.*did not answer JSON/ },
	},
	// --- HTTP: the shell (read before subscribing; the socket sends it when it cannot be read)
	{
		name: "shell route missing (404)",
		hostile: {
			http: http("shell", () => Response.json({}, { status: 404 })),
		},
		expect: { state: "online" },
		after: socketShellSeen,
	},
	{
		name: "shell is not JSON",
		hostile: { http: http("shell", () => new Response("<html>shell</html>")) },
		expect: { state: "online" },
		after: socketShellSeen,
	},
	{
		name: "shell fails with 500",
		hostile: {
			http: http("shell", () => new Response("kaput", { status: 500 })),
		},
		expect: { state: "online" },
		after: socketShellSeen,
	},
	{
		name: "shell is not an object",
		hostile: { http: http("shell", () => Response.json([1, 2])) },
		expect: { state: "online" },
		after: socketShellSeen,
	},
	// --- The shell socket
	{
		name: "truncated JSON frame on the socket",
		hostile: afterSync(() => ['{"_tag":"Chunk","requestId":"1","val']),
		expect: { state: "online" },
		after: markerSeen,
	},
	{
		name: "frames that are not objects (number, null, string, array of junk)",
		hostile: afterSync(() => ["42", "null", '"hello"', "[1, null, {}]"]),
		expect: { state: "online" },
		after: markerSeen,
	},
	{
		name: "unknown frame _tag",
		hostile: afterSync(() => [
			JSON.stringify({ _tag: "Hologram", requestId: "1", values: [] }),
		]),
		expect: { state: "online" },
		after: markerSeen,
	},
	{
		name: "Chunk with wrong types (values not an array, requestId an object)",
		hostile: afterSync((id) => [
			JSON.stringify({ _tag: "Chunk", requestId: id, values: "nope" }),
			JSON.stringify({ _tag: "Chunk", requestId: { id }, values: [] }),
		]),
		expect: { state: "online" },
		after: markerSeen,
	},
	{
		name: "unknown shell stream item kinds and malformed known kinds",
		hostile: afterSync((id) => [
			JSON.stringify({
				_tag: "Chunk",
				requestId: id,
				values: [
					{ kind: "thread.teleported", sequence: 11 },
					{ kind: "thread.updated", sequence: "eleven", thread: 5 },
					{ kind: "project.removed", sequence: 11 },
					{ kind: 7 },
					"just a string",
				],
			}),
		]),
		expect: { state: "online" },
		after: markerSeen,
	},
	{
		name: "unknown enum members in a thread (status, request kind, role)",
		hostile: afterSync((id) => [
			JSON.stringify({
				_tag: "Chunk",
				requestId: id,
				values: [
					{
						kind: "thread.updated",
						sequence: 11,
						location: "active",
						thread: threadShell({
							status: "teleporting",
							pendingRuntimeRequest: { id: "req-x", kind: "telepathy" },
							latestVisibleMessage: { id: "m-x", role: "oracle", text: 5 },
						}),
					},
				],
			}),
		]),
		expect: { state: "online" },
		after: async (ctx) => {
			await until(
				() =>
					(ctx.thread(THREAD_ID) as { status?: string } | undefined)?.status ===
					"teleporting",
				5_000,
				"unknown status applied",
			);
			const read = await callTool(ctx.client, "t3_thread", {
				thread_id: THREAD_ID,
			});
			expect(read.isError).toBe(false);
		},
	},
	{
		name: "a 5 MB message on the socket",
		hostile: afterSync((id) => [
			JSON.stringify({
				_tag: "Chunk",
				requestId: id,
				values: [
					{
						kind: "thread.updated",
						sequence: 10.5,
						location: "active",
						thread: threadShell({
							id: "t-huge",
							title: "H".repeat(5 * 1024 * 1024),
						}),
					},
				],
			}),
		]),
		expect: { state: "online" },
		after: async (ctx) => {
			await markerSeen(ctx);
			const machines = await callTool(ctx.client, "t3_machines");
			expect(machines.text.length).toBeLessThan(100_000);
		},
	},
	{
		name: "a Chunk that expects an Ack: the stream waits for it",
		hostile: {
			onRequest(tag, id, _payload, ws) {
				if (tag !== "orchestration.subscribeShell") return false;
				ws.chunk(id, [{ kind: "snapshot", snapshot: shellSnapshot() }]);
				// Like Effect RPC: the next Chunk only after the Ack of this one.
				void ws.waitAck(id, 3_000).then((acked) => {
					if (acked) ws.chunk(id, [{ kind: "synchronized" }]);
				});
				return true;
			},
		},
		expect: { state: "online" },
		after: async ({ hostile }) => {
			expect(hostile.acks.length).toBeGreaterThanOrEqual(1);
		},
	},
	{
		name: "a Chunk for a request the client never made is still acked",
		hostile: afterSync(() => [
			JSON.stringify({ _tag: "Chunk", requestId: "999", values: [{}] }),
		]),
		expect: { state: "online" },
		after: async (ctx) => {
			await markerSeen(ctx);
			await until(
				() => ctx.hostile.acks.includes("999"),
				2_000,
				"ack of the stray chunk",
			);
		},
	},
	{
		name: "an Exit with a Die ends the shell subscription",
		hostile: {
			onRequest(tag, id, _payload, ws) {
				if (tag !== "orchestration.subscribeShell") return false;
				ws.exit(id, exits.die({ name: "Boom", message: "shell exploded" }));
				return true;
			},
		},
		expect: {
			state: "offline",
			reason: /hostile.*shell subscription failed \(Boom: shell exploded\)/,
		},
	},
	{
		name: "an Exit that is not an exit",
		hostile: {
			onRequest(tag, id, _payload, ws) {
				if (tag !== "orchestration.subscribeShell") return false;
				ws.send({ _tag: "Exit", requestId: id, exit: 42 });
				return true;
			},
		},
		expect: {
			state: "offline",
			reason: /hostile.*shell subscription failed \(malformed exit: 42\)/,
		},
	},
	{
		name: "a Defect frame is logged, not fatal",
		hostile: afterSync(() => [
			JSON.stringify({ _tag: "Defect", defect: { message: "server sad" } }),
		]),
		expect: { state: "online" },
		after: markerSeen,
	},
	{
		name: "the socket closes right after it opens",
		hostile: { onOpen: (ws) => ws.close() },
		expect: { state: "offline", reason: /hostile.*offline/ },
	},
	// --- Commands and reads through the tools
	{
		name: "launchThread answered with an Exit with a Die",
		hostile: answerLaunch(exits.die("launch exploded")),
		expect: { state: "online" },
		after: toolFails(
			"t3_dispatch",
			NEW_THREAD,
			/Machine "hostile" refused the dispatch: .*launch exploded/,
		),
	},
	{
		name: "launchThread answered with a typed failure",
		hostile: answerLaunch(
			exits.fail({ _tag: "ProjectNotFound", message: "no such project" }),
		),
		expect: { state: "online" },
		after: toolFails(
			"t3_dispatch",
			NEW_THREAD,
			/Machine "hostile" refused the dispatch: no such project/,
		),
	},
	{
		name: "launchThread answered with a success of the wrong type",
		hostile: answerLaunch(exits.success("launched, trust me")),
		expect: { state: "online" },
		after: toolFails(
			"t3_dispatch",
			NEW_THREAD,
			/Machine "hostile" did not confirm the dispatch \(malformed launchThread result/,
		),
		// Uncertain, by design: the command may have run, so it is kept for a same-request_id retry.
		rows: { threads: 1, dispatches: 1, events: 0 },
	},
	{
		name: "dispatchCommand (continuation) answered with a Die",
		hostile: {
			onRequest(tag, id, _payload, ws) {
				if (tag !== "orchestration.dispatchCommand") return false;
				ws.exit(id, exits.die("dispatch exploded"));
				return true;
			},
		},
		expect: { state: "online" },
		after: toolFails(
			"t3_dispatch",
			{ thread_id: THREAD_ID, prompt: "more" },
			/Machine "hostile" refused the dispatch: .*dispatch exploded/,
		),
	},
	{
		name: "thread read answers non-JSON",
		hostile: { http: http("thread", () => new Response("not json at all")) },
		expect: { state: "online" },
		after: toolFails(
			"t3_thread",
			{ thread_id: THREAD_ID },
			/threads\/t-hostile did not answer JSON/,
		),
	},
	{
		name: "thread read answers 500",
		hostile: {
			http: http("thread", () =>
				Response.json({ _tag: "Boom", message: "db down" }, { status: 500 }),
			),
		},
		expect: { state: "online" },
		after: toolFails(
			"t3_thread",
			{ thread_id: THREAD_ID },
			/failed with 500 \(Boom, db down\)/,
		),
	},
	{
		name: "thread read with a projection of the wrong type",
		hostile: {
			http: http("thread", () => Response.json({ projection: "nope" })),
		},
		expect: { state: "online" },
		after: toolFails(
			"t3_thread",
			{ thread_id: THREAD_ID },
			/malformed thread projection/,
		),
	},
	{
		name: "thread read with wrong-typed lists and unknown run status is tolerated",
		hostile: {
			http: http("thread", () => {
				const detail = threadDetail({
					messages: "nope",
					turnItems: [{ id: "ti", type: "hologram", files: 5 }, 7],
					runtimeRequests: { not: "a list" },
				});
				const runs = (detail.projection as { runs: { status: string }[] }).runs;
				(runs[0] as { status: string }).status = "warping";
				return Response.json(detail);
			}),
		},
		expect: { state: "online" },
		after: async ({ client }) => {
			const r = await callTool<{ latest_run: { status: string } }>(
				client,
				"t3_thread",
				{ thread_id: THREAD_ID },
			);
			expect(r.isError).toBe(false);
			expect(r.data.latest_run.status).toBe("warping");
		},
	},
];

describe("malformed T3 responses: a clear machine state or error, and the server keeps serving", () => {
	for (const c of T3_CASES) {
		itUnlessBug(
			c.name,
			c.bug,
			async () => {
				const hostile = startHostileT3(c.hostile);
				const stack = await startStack({
					machines: [
						{ name: "hostile", url: hostile.url, token: hostile.token },
					],
				});
				try {
					const client = await stack.client();
					const machine = () =>
						stack.server.services.fleet.get("hostile")?.machine;
					await until(
						() => {
							const status = machine()?.status();
							if (!status || status.state !== c.expect.state) return false;
							return (
								c.expect.state === "online" ||
								c.expect.reason.test(status.reason ?? "")
							);
						},
						5_000,
						`machine ${c.expect.state}`,
					).catch((err) => {
						throw new Error(
							`${(err as Error).message}; status: ${JSON.stringify(machine()?.status())}`,
						);
					});
					// The tool surface shows the same state and reason.
					const listed = await callTool<{
						machines: { name: string; state: string; reason: string | null }[];
					}>(client, "t3_machines");
					expect(listed.isError).toBe(false);
					const entry = listed.data.machines.find((m) => m.name === "hostile");
					expect(entry?.state).toBe(c.expect.state);
					if (c.expect.state !== "online")
						expect(entry?.reason ?? "").toMatch(c.expect.reason);
					await c.after?.({
						stack,
						client,
						hostile,
						thread: (id) => machine()?.thread(id),
					});
					await expectServing(stack, client);
					expect(PROJECT.id).toBe("p-hostile");
					await stack.server.services.events.tracker.idle();
					expectClean(stack, c.rows ?? NO_ROWS);
				} finally {
					await stack.stop();
					await hostile.stop();
				}
			},
			20_000,
		);
	}
});
