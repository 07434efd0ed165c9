/**
 * POST /mcp bodies are read once: the initialize check, the `t3_thread` read-ahead and the SDK
 * share one parse. The read-ahead starts the thread's GET when the request arrives and hands it
 * to that call, so a settled thread costs one T3 read per call (counted on the simulator), in
 * both protocol eras. Bodies that are not JSON keep the SDK's own answers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { MAX_BODY_BYTES } from "../../src/http/mcp-body.ts";
import {
	callTool,
	ERAS,
	type Stack,
	startStack,
	until,
} from "../helpers/stack.ts";

let stack: Stack;
const clients = new Map<string, Client>();

beforeAll(async () => {
	stack = await startStack();
	for (const era of ERAS) clients.set(era, await stack.client({ era }));
});
afterAll(async () => {
	await stack.stop();
});

const client = (era: string) => {
	const c = clients.get(era);
	if (!c) throw new Error(`no ${era} client`);
	return c;
};
const threadGets = () =>
	stack.sim().stats().requests["GET /api/orchestration/threads/:id"] ?? 0;

async function settledThread(): Promise<string> {
	const c = client("legacy");
	const { data } = await callTool<{ thread_id: string }>(c, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt: "say hello",
	});
	const waited = await callTool<{ outcome: string }>(c, "t3_wait", {
		thread_id: data.thread_id,
		timeout: 30,
	});
	expect(waited.data.outcome).toBe("completed");
	// Settled and no longer followed: t3_thread reads it from T3, not from the thread stream.
	const machine = stack.server.services.fleet.get("demo")?.machine;
	await until(
		() => machine?.followStats?.().followed === 0,
		10_000,
		"thread no longer followed",
	);
	return data.thread_id;
}

describe("t3_thread read-ahead", () => {
	for (const era of ERAS) {
		test(`${era}: a settled thread is read from T3 once per call, and shown in full`, async () => {
			const threadId = await settledThread();
			const before = threadGets();
			for (let i = 0; i < 3; i++) {
				const { isError, data } = await callTool<{
					thread_id: string;
					status: string;
					runs: { messages: { role: string; text: string }[] }[];
				}>(client(era), "t3_thread", { thread_id: threadId });
				expect(isError).toBe(false);
				expect(data.thread_id).toBe(threadId);
				expect(data.status).toBe("completed");
				expect(data.runs[0]?.messages.map((m) => m.role)).toEqual([
					"user",
					"assistant",
				]);
			}
			expect(threadGets() - before).toBe(3);
		});
	}

	// A plain 2025-era call is answered as JSON (http/json-calls.ts), whole by nature; one asking
	// for progress keeps the SSE stream, which is held until the read settles.
	test.each([
		["as JSON", undefined, "application/json"],
		["over SSE", { progressToken: "p" }, "text/event-stream"],
	])(
		"the answer leaves with its headers (%s): nothing is sent while T3 is still reading",
		async (_form, meta, type) => {
			const threadId = await settledThread();
			const sim = stack.sim();
			// T3 answers 100 ms late. Before, the status line and first headers left at once and the
			// rest with the result: two writes, the client woken twice.
			sim.setDelay(100);
			try {
				const url = new URL(stack.server.url);
				const body = JSON.stringify({
					jsonrpc: "2.0",
					id: 1,
					method: "tools/call",
					params: {
						name: "t3_thread",
						arguments: { thread_id: threadId },
						...(meta && { _meta: meta }),
					},
				});
				const first = await new Promise<string>((resolve, reject) => {
					Bun.connect({
						hostname: url.hostname,
						port: Number(url.port),
						socket: {
							open(socket) {
								socket.write(
									`POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
								);
							},
							data(socket, data) {
								resolve(data.toString());
								socket.end();
							},
							close: () => reject(new Error("closed before any answer")),
							error: (_socket, error) => reject(error),
						},
					}).catch(reject);
				});
				expect(first).toStartWith("HTTP/1.1 200");
				expect(first.toLowerCase()).toContain(`content-type: ${type}`);
				expect(first).toContain(threadId);
				expect(first).toContain("structuredContent");
			} finally {
				sim.setDelay(0);
			}
		},
	);

	test("a call its arguments fail still answers with the argument's error", async () => {
		const threadId = await settledThread();
		const { isError, text } = await callTool(client("legacy"), "t3_thread", {
			thread_id: threadId,
			turns: "many",
		});
		expect(isError).toBe(true);
		expect(text).toContain("turns");
	});

	test("a T3 failure of the early read is the call's error, naming the machine", async () => {
		const threadId = await settledThread();
		const sim = stack.sim();
		sim.revokeToken(sim.token);
		try {
			const { isError, text } = await callTool(client("legacy"), "t3_thread", {
				thread_id: threadId,
			});
			expect(isError).toBe(true);
			expect(text).toContain("401");
			expect(text).not.toContain(sim.token);
		} finally {
			sim.restoreToken(sim.token);
		}
	});
});

describe("POST /mcp bodies", () => {
	const post = (
		body: string | ReadableStream<Uint8Array>,
		headers: Record<string, string> = {},
	) =>
		fetch(`${stack.server.url}/mcp`, {
			method: "POST",
			headers: {
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
				"mcp-protocol-version": "2025-11-25",
				...headers,
			},
			body,
		});

	test("a body that is not JSON gets the SDK's parse error", async () => {
		const response = await post("{not json");
		expect(response.status).toBe(400);
		const body = (await response.json()) as { error: { code: number } };
		expect(body.error.code).toBe(-32700);
	});

	test("a chunked body over the limit is refused with 413, unread past the limit", async () => {
		const chunk = new Uint8Array(1024 * 1024).fill(32);
		let sent = 0;
		const stream = new ReadableStream<Uint8Array>({
			pull(controller) {
				if (sent > MAX_BODY_BYTES / chunk.length) return controller.close();
				sent += 1;
				controller.enqueue(chunk);
			},
		});
		const response = await post(stream);
		expect(response.status).toBe(413);
		const body = (await response.json()) as { error: { message: string } };
		expect(body.error.message).toContain("too large");
	});

	test("a declared size over the limit is refused by the SDK without reading it", async () => {
		const response = await post(" ".repeat(MAX_BODY_BYTES + 1));
		expect(response.status).toBe(413);
	});
});
