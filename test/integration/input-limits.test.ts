/**
 * Input limits at the edges (issue 9 "Small ones"): the prompt limit counted in characters and
 * advertised in the schema, the `X-Conversation-Origin` header rule, and `initialize` without
 * params answered as invalid params. Over HTTP against the simulator.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { callTool, type Stack, startStack } from "../helpers/stack.ts";

const mcpHeaders = {
	"content-type": "application/json",
	accept: "application/json, text/event-stream",
	"mcp-protocol-version": "2025-11-25",
};
const listTools = JSON.stringify({
	jsonrpc: "2.0",
	id: 1,
	method: "tools/list",
	params: {},
});

let stack: Stack;
beforeAll(async () => {
	stack = await startStack();
});
afterAll(async () => {
	await stack.stop();
});

describe("prompt length", () => {
	test("the limit is the schema's maxLength, counted in characters (code points)", async () => {
		const client = await stack.client();
		const { tools } = await client.listTools();
		const dispatch = tools.find((t) => t.name === "t3_dispatch");
		const properties = (dispatch?.inputSchema.properties ?? {}) as Record<
			string,
			{ maxLength?: number }
		>;
		const prompt = properties.prompt;
		expect(prompt?.maxLength).toBe(100_000);

		// 100 000 emoji are 200 000 UTF-16 units but 100 000 characters: accepted.
		const atLimit = await callTool(client, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "😀".repeat(100_000),
			watch: false,
		});
		expect(atLimit.text).not.toContain("over the limit");
		expect(atLimit.isError).toBe(false);

		const over = await callTool(client, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "😀".repeat(100_001),
		});
		expect(over.isError).toBe(true);
		expect(over.text).toContain(
			"prompt: 100001 characters is over the limit of 100000",
		);
	});
});

describe("X-Conversation-Origin", () => {
	const post = (origin: string) =>
		fetch(stack.server.mcpUrl, {
			method: "POST",
			headers: { ...mcpHeaders, "x-conversation-origin": origin },
			body: listTools,
		});

	test("printable ASCII up to 256 characters is accepted", async () => {
		expect((await post("conv-42 ~!")).status).toBe(200);
		expect((await post("a".repeat(256))).status).toBe(200);
	});

	test("non-ASCII or longer than 256 characters → 400 naming the header", async () => {
		for (const origin of ["conv-é", "a".repeat(257)]) {
			const response = await post(origin);
			expect(response.status).toBe(400);
			const body = (await response.json()) as { error: string };
			expect(body.error).toContain("X-Conversation-Origin");
		}
	});
});

describe("initialize", () => {
	test("without params → -32602 invalid params with a short message", async () => {
		for (const params of [undefined, {}]) {
			const response = await fetch(stack.server.mcpUrl, {
				method: "POST",
				headers: {
					"content-type": "application/json",
					accept: "application/json, text/event-stream",
				},
				body: JSON.stringify({
					jsonrpc: "2.0",
					id: 7,
					method: "initialize",
					...(params ? { params } : {}),
				}),
			});
			const text = await response.text();
			const body = JSON.parse(
				text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? ""),
			) as { id: number; error: { code: number; message: string } };
			expect(body.id).toBe(7);
			expect(body.error.code).toBe(-32602);
			expect(body.error.message).toStartWith("Invalid params for initialize");
			expect(body.error.message).not.toContain("\n");
			expect(body.error.message.length).toBeLessThan(200);
		}
	});
});
