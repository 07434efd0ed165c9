/** Secrets never appear in logs or tool output, even at debug level and on failures. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../src/util/log.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import { callTool, type Stack, startStack, until } from "../helpers/stack.ts";

const lines: string[] = [];
let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		machines: [
			{ name: "demo" },
			{ name: "wrong", token: "wrong-token-value-123" },
		],
		server: {
			token: "inbound-token-value-456",
			hookUrl: receiver.url,
			hookToken: "hook-token-value-789",
			hookSecret: TEST_SECRET,
			logLevel: "debug",
		},
		log: createLogger("debug", (line) => lines.push(line)),
	});
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

test("no token, ticket or secret in logs or results", async () => {
	const client = await stack.client({
		headers: { "X-Conversation-Origin": "conv-s" },
	});
	const outputs: string[] = [];
	await until(
		async () => {
			const m = await callTool<{ machines: { state: string }[] }>(
				client,
				"t3_machines",
			);
			outputs.push(m.text);
			return m.data.machines.every((x) => x.state !== "connecting");
		},
		10_000,
		"machines settle",
	);
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt: "hello",
	});
	outputs.push(d.text);
	outputs.push(
		(
			await callTool(client, "t3_wait", {
				thread_id: d.data.thread_id,
				timeout: 20,
			})
		).text,
	);
	outputs.push(
		(
			await callTool(client, "t3_dispatch", {
				machine: "wrong",
				project: "demo",
				prompt: "x",
			})
		).text,
	);
	await until(() => receiver.deliveries.length >= 1, 10_000, "event");
	expect(lines.length).toBeGreaterThan(5);
	const everything = [...lines, ...outputs].join("\n");
	const secrets = [
		stack.sim("demo").token,
		"wrong-token-value-123",
		"inbound-token-value-456",
		"hook-token-value-789",
		TEST_SECRET,
		TEST_SECRET.slice(6),
	];
	for (const secret of secrets) expect(everything).not.toContain(secret);
	expect(everything).not.toMatch(/wsTicket=[^&"\s]+/);
});
