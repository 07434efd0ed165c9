/**
 * 2025-era calls of the quick tools (memory, or one bounded T3 read) come back as one JSON body;
 * every other call, a task-augmented one and one asking for progress keep the SSE stream
 * (keep-alive comments, progress). The official client reads both forms alike.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	callTool,
	type Stack,
	startStack,
	untilMachinesOnline,
} from "../helpers/stack.ts";

let stack: Stack;
let threadId: string;
beforeAll(async () => {
	stack = await startStack({ machines: [{ name: "m" }] });
	const client = await stack.client();
	await untilMachinesOnline(client);
	const { data } = await callTool<{ thread_id: string }>(
		client,
		"t3_dispatch",
		{
			machine: "m",
			project: "demo",
			prompt: "say hello",
		},
	);
	threadId = data.thread_id;
	await callTool(client, "t3_wait", { thread_id: threadId, timeout: 30 });
});
afterAll(async () => {
	await stack.stop();
});

let nextId = 1;
const MODERN = "2026-07-28";
async function post(
	name: string,
	args: Record<string, unknown>,
	params: Record<string, unknown> = {},
	era: "legacy" | "modern" = "legacy",
): Promise<{ type: string | null; text: string }> {
	const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
	const response = await fetch(`${stack.server.url}/mcp`, {
		method: "POST",
		headers: {
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			...(era === "modern"
				? {
						"mcp-protocol-version": MODERN,
						"mcp-method": "tools/call",
						"mcp-name": name,
					}
				: { "mcp-protocol-version": "2025-11-25" }),
		},
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: nextId++,
			method: "tools/call",
			params: {
				name,
				arguments: args,
				...params,
				...(era === "modern" && {
					_meta: {
						...meta,
						"io.modelcontextprotocol/protocolVersion": MODERN,
						"io.modelcontextprotocol/clientInfo": {
							name: "json-answers",
							version: "1",
						},
						"io.modelcontextprotocol/clientCapabilities": {},
					},
				}),
			},
		}),
	});
	expect(response.status).toBe(200);
	return {
		type: response.headers.get("content-type"),
		text: await response.text(),
	};
}

describe("quick tool calls", () => {
	test.each([
		["t3_machines", {}, "legacy"],
		["t3_threads", { limit: 5 }, "legacy"],
		["t3_projects", { machine: "m" }, "legacy"],
		["t3_thread", {}, "legacy"],
		["t3_machines", {}, "modern"],
		["t3_thread", {}, "modern"],
	] as const)(
		"%s %o answers with one JSON body (%s era)",
		async (name, args, era) => {
			const { type, text } = await post(
				name,
				name === "t3_thread" ? { thread_id: threadId } : args,
				{},
				era,
			);
			expect(type).toStartWith("application/json");
			const answer = JSON.parse(text) as {
				id: number;
				result: {
					structuredContent: Record<string, unknown>;
					isError?: boolean;
				};
			};
			expect(answer.result.isError).toBeUndefined();
			expect(
				Object.keys(answer.result.structuredContent).length,
			).toBeGreaterThan(0);
		},
	);

	test("a tool error is a JSON answer too", async () => {
		const { type, text } = await post("t3_projects", { machine: "nowhere" });
		expect(type).toStartWith("application/json");
		expect(JSON.parse(text).result.isError).toBe(true);
	});

	test("a call asking for progress keeps the stream", async () => {
		const { type, text } = await post(
			"t3_machines",
			{},
			{
				_meta: { progressToken: "p1" },
			},
		);
		expect(type).toStartWith("text/event-stream");
		expect(text).toContain("event: message");
	});

	test.each(["legacy", "modern"] as const)(
		"other tools keep the stream (%s era)",
		async (era) => {
			const { type, text } = await post(
				"t3_wait",
				{ thread_id: threadId, timeout: 1 },
				{},
				era,
			);
			expect(type).toStartWith("text/event-stream");
			expect(text).toContain("event: message");
		},
	);

	test("a 2026 version header without the envelope is still the SDK's to refuse", async () => {
		const response = await fetch(`${stack.server.url}/mcp`, {
			method: "POST",
			headers: {
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
				"mcp-protocol-version": MODERN,
			},
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: nextId++,
				method: "tools/call",
				params: { name: "t3_machines", arguments: {} },
			}),
		});
		expect(response.status).toBe(400);
		expect(await response.text()).toContain("envelope");
	});

	test.each(["legacy", "modern"] as const)(
		"the official client reads the JSON answers (%s era)",
		async (era) => {
			const client = await stack.client({ era });
			const { data } = await callTool<{
				machines: { name: string; state: string }[];
			}>(client, "t3_machines");
			expect(data.machines).toEqual([
				expect.objectContaining({ name: "m", state: "online" }),
			]);
			const threads = await callTool<{ threads: unknown[] }>(
				client,
				"t3_threads",
			);
			expect(Array.isArray(threads.data.threads)).toBe(true);
		},
	);
});
