/**
 * `t3code-mcp stdio` answers every line (issue 16): the real CLI fed raw lines as a client's pipe
 * would carry them. Invalid JSON → -32700; JSON that is not a JSON-RPC message → -32600 (with
 * the id when there is one); batches as each era says (2025-03-26 answers them as one array;
 * 2025-11-25 and 2026-07-28 refuse each element); a NUL after a message does not lose it; a line
 * over the 10 MiB limit gets an error and the next one is served; at end of input everything
 * read before it is answered, then the process exits 0. stdout holds nothing but JSON-RPC.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");

let sim: Sim;
let dir: string;
let n = 0;
beforeAll(async () => {
	sim = await startSim({ stepMs: 5, coalesceMs: 5 });
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-stdio-lines-"));
});
afterAll(async () => {
	await sim.stop();
	rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
interface Ended {
	code: number;
	/** Each stdout line, parsed (a test fails if one is not JSON). */
	out: (Json | Json[])[];
	stderr: string;
}

/** Launches `stdio` on the sim, with its own HOME (config and state at the XDG defaults). */
function launch() {
	const home = join(dir, `s${n++}`);
	mkdirSync(join(home, "t3code-mcp"), { recursive: true });
	writeFileSync(
		join(home, "t3code-mcp", "t3code.toml"),
		`[machines.demo]\nurl = "${sim.url}"\ntoken_env = "T3_DEMO_TOKEN"\nprojects = ["*"]\nmodel = "claudeAgent/claude-opus-5"\n`,
	);
	return Bun.spawn([process.execPath, "run", ENTRY, "stdio"], {
		cwd: "/",
		env: {
			PATH: process.env.PATH ?? "",
			HOME: home,
			XDG_CONFIG_HOME: home,
			XDG_STATE_HOME: home,
			T3_DEMO_TOKEN: sim.token,
			T3CODE_MCP_LOG_LEVEL: "info",
		},
		stdin: "pipe",
		stdout: "pipe",
		stderr: "pipe",
		timeout: 30_000,
	});
}

const parseLines = (stdout: string) => {
	const out = stdout
		.split("\n")
		.filter((l) => l !== "")
		.map((l) => JSON.parse(l) as Json | Json[]);
	// stdout carries only JSON-RPC.
	for (const message of out.flat()) expect(message.jsonrpc).toBe("2.0");
	return out;
};

/** Launches `stdio`, writes `input` (then closes stdin), and reads everything to the exit. */
async function session(input: (string | Uint8Array)[]): Promise<Ended> {
	const proc = launch();
	for (const piece of input) proc.stdin.write(piece);
	await proc.stdin.end();
	const [stdout, stderr, code] = await Promise.all([
		new Response(proc.stdout).text(),
		new Response(proc.stderr).text(),
		proc.exited,
	]);
	return { code, out: parseLines(stdout), stderr };
}

const line = (message: unknown) => `${JSON.stringify(message)}\n`;
const request = (id: unknown, method: string, params: Json = {}) =>
	line({ jsonrpc: "2.0", id, method, params });
const initialize = (protocolVersion: string) =>
	request(0, "initialize", {
		protocolVersion,
		capabilities: {},
		clientInfo: { name: "stdio-lines-test", version: "1.0.0" },
	});
const initialized = line({
	jsonrpc: "2.0",
	method: "notifications/initialized",
});
const MODERN_META = {
	"io.modelcontextprotocol/protocolVersion": "2026-07-28",
	"io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
	"io.modelcontextprotocol/clientCapabilities": {},
};

/** The single (non-array) answer with this id. */
function answer(ended: Ended, id: unknown): Json {
	const found = ended.out.filter(
		(m): m is Json => !Array.isArray(m) && m.id === id,
	);
	expect(found).toHaveLength(1);
	return found[0] as Json;
}

const errorOf = (m: Json) => m.error as { code: number; message: string };

describe("stdio answers every line", () => {
	test("invalid JSON → -32700; not a request ([], null, 42, a string, jsonrpc 1.0, a bad id) → -32600; the server keeps serving", async () => {
		const ended = await session([
			initialize("2025-11-25"),
			initialized,
			"this is not json\n",
			'{"jsonrpc":"2.0","id":3,"method":\n',
			"[]\n",
			"null\n",
			"42\n",
			'"a string"\n',
			line({ jsonrpc: "1.0", id: 7, method: "ping" }),
			line({ id: 8, method: "ping" }),
			line({ jsonrpc: "2.0", id: true, method: "ping" }),
			line({ jsonrpc: "2.0", id: 10, method: 5 }),
			"\n", // a blank line is no message
			request(11, "ping"),
		]);
		expect(ended.code).toBe(0);
		// One answer per line that is not blank: the init result plus 11.
		expect(ended.out).toHaveLength(12);
		const nulls = ended.out.filter((m) => !Array.isArray(m) && m.id === null);
		expect(nulls.map((m) => errorOf(m as Json).code)).toEqual([
			-32700, -32700, -32600, -32600, -32600, -32600, -32600,
		]);
		expect(errorOf(nulls[2] as Json).message).toBe(
			"Invalid Request: an empty batch",
		);
		expect(errorOf(nulls[3] as Json).message).toContain("got null");
		expect(errorOf(answer(ended, 7))).toEqual({
			code: -32600,
			message: 'Invalid Request: "jsonrpc" must be "2.0", got "1.0"',
		});
		expect(errorOf(answer(ended, 8)).message).toContain(
			'"jsonrpc" must be "2.0", got nothing',
		);
		expect(errorOf(answer(ended, 10)).code).toBe(-32600);
		expect(answer(ended, 11).result).toEqual({});
	}, 40_000);

	test("a NUL after a valid message does not lose it (nor the one after it)", async () => {
		const enc = new TextEncoder();
		const ended = await session([
			initialize("2025-11-25"),
			enc.encode(`${request(20, "ping").trimEnd()}\0\n`),
			enc.encode(`${request(21, "ping").trimEnd()}\0${request(22, "ping")}`),
			enc.encode(`\0\0${request(23, "ping")}`),
		]);
		expect(ended.code).toBe(0);
		for (const id of [20, 21, 22, 23])
			expect(answer(ended, id).result).toEqual({});
		expect(ended.out).toHaveLength(5);
	}, 40_000);

	test("a line over the size limit gets an error naming its id, and the next request is answered", async () => {
		const huge = line({
			jsonrpc: "2.0",
			id: 30,
			method: "tools/call",
			params: {
				name: "t3_machines",
				arguments: { padding: "x".repeat(11 * 1024 * 1024) },
			},
		});
		const ended = await session([
			initialize("2025-11-25"),
			// In pieces, as a pipe delivers it.
			...Array.from({ length: Math.ceil(huge.length / 65536) }, (_, i) =>
				huge.slice(i * 65536, (i + 1) * 65536),
			),
			request(31, "tools/call", { name: "t3_machines", arguments: {} }),
		]);
		expect(ended.code).toBe(0);
		const refused = errorOf(answer(ended, 30));
		expect(refused.code).toBe(-32600);
		expect(refused.message).toMatch(
			/^Invalid Request: the message is \d+ bytes, over the limit of 10485760 bytes/,
		);
		const machines = answer(ended, 31).result as {
			structuredContent: { machines: { name: string }[] };
		};
		expect(machines.structuredContent.machines.map((m) => m.name)).toEqual([
			"demo",
		]);
	}, 60_000);

	test("end of input right after several requests: every one is answered, then exit 0", async () => {
		const calls = [40, 41, 42, 43, 44];
		const ended = await session([
			initialize("2025-11-25"),
			initialized,
			...calls.map((id, i) =>
				i % 2 === 0
					? request(id, "tools/call", {
							name: "t3_projects",
							arguments: { machine: "demo" },
						})
					: request(id, "tools/call", { name: "t3_machines", arguments: {} }),
			),
			request("last", "tools/list"),
		]);
		expect(ended.code).toBe(0);
		expect(answer(ended, 0).result).toBeDefined();
		for (const id of calls) expect(answer(ended, id).result).toBeDefined();
		expect(answer(ended, "last").result).toHaveProperty("tools");
		expect(ended.stderr).toContain(
			"stdin closed; every request read was answered",
		);
	}, 40_000);
});

test("end of input with a t3_wait in flight: the wait answers now with its current state, then exit 0", async () => {
	const proc = launch();
	const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
	const decoder = new TextDecoder();
	let text = "";
	/** Reads stdout until a line answers `id`. */
	const answerTo = async (id: number): Promise<Json> => {
		for (;;) {
			// Complete lines only: a read may end inside one.
			const found = parseLines(text.slice(0, text.lastIndexOf("\n") + 1)).find(
				(m): m is Json => !Array.isArray(m) && m.id === id,
			);
			if (found) return found;
			const { value, done } = await reader.read();
			if (done) throw new Error(`stdout ended before an answer to ${id}`);
			text += decoder.decode(value);
		}
	};
	proc.stdin.write(initialize("2025-11-25") + initialized);
	await answerTo(0);
	// The machine comes online, then a run that holds until released.
	let dispatched: Json | undefined;
	for (let id = 1; dispatched === undefined; id++) {
		proc.stdin.write(
			request(id, "tools/call", {
				name: "t3_dispatch",
				arguments: { machine: "demo", project: "demo", prompt: "a long task" },
			}),
		);
		const result = (await answerTo(id)).result as Json;
		if (result.isError !== true) dispatched = result;
		else if (id > 5_000) throw new Error(JSON.stringify(result));
	}
	const threadId = (dispatched.structuredContent as Json).thread_id;
	proc.stdin.write(
		request(900, "tools/call", {
			name: "t3_wait",
			arguments: { thread_id: threadId, timeout: 600 },
		}),
	);
	await proc.stdin.end();
	const waited = (await answerTo(900)).result as Json;
	expect((waited.structuredContent as Json).outcome).toBe("timeout");
	expect(await proc.exited).toBe(0);
}, 40_000);

describe("batches, as the era in use says", () => {
	const batch = [
		{ jsonrpc: "2.0", id: 50, method: "ping" },
		{ jsonrpc: "2.0", method: "notifications/progress", params: {} },
		{ jsonrpc: "2.0", id: "fifty-one", method: "tools/list" },
		42,
	];

	test("2025-03-26 has batches: answered as one array (nothing for the notification, an error for the non-message)", async () => {
		const ended = await session([
			initialize("2025-03-26"),
			initialized,
			line(batch),
			request(52, "ping"),
		]);
		expect(ended.code).toBe(0);
		expect((answer(ended, 0).result as Json).protocolVersion).toBe(
			"2025-03-26",
		);
		const arrays = ended.out.filter((m) => Array.isArray(m)) as Json[][];
		expect(arrays).toHaveLength(1);
		const [answers] = arrays as [Json[]];
		expect(answers).toHaveLength(3);
		expect(answers[0]).toMatchObject({ id: 50, result: {} });
		expect(answers[1]?.id).toBe("fifty-one");
		expect(answers[1]?.result).toHaveProperty("tools");
		expect(answers[2]).toMatchObject({ id: null, error: { code: -32600 } });
		expect(answer(ended, 52).result).toEqual({});
	}, 40_000);

	for (const era of ["2025-11-25", "2026-07-28"] as const)
		test(`${era} has none: refused with an error per element, never dropped`, async () => {
			const open =
				era === "2026-07-28"
					? request(0, "server/discover", { _meta: MODERN_META })
					: initialize(era);
			const ended = await session([
				open,
				line(batch),
				request(
					53,
					"tools/list",
					era === "2026-07-28" ? { _meta: MODERN_META } : {},
				),
			]);
			expect(ended.code).toBe(0);
			const arrays = ended.out.filter((m) => Array.isArray(m)) as Json[][];
			expect(arrays).toHaveLength(1);
			const [refusals] = arrays as [Json[]];
			expect(refusals.map((r) => r.id)).toEqual([50, null, "fifty-one", null]);
			for (const r of refusals) {
				expect(errorOf(r).code).toBe(-32600);
				expect(errorOf(r).message).toBe(
					`Invalid Request: MCP ${era} has no JSON-RPC batches (only 2025-03-26 had them); send one message per line`,
				);
			}
			expect(answer(ended, 53).result).toHaveProperty("tools");
		}, 40_000);
});
