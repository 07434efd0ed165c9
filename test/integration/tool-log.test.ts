/**
 * One `info` log line per tool call (CONTRACT.md "Operators"): client, tool, machine, thread,
 * result and duration, never the prompt, an answer or a token.
 */
import { describe, expect, it } from "bun:test";
import { createLogger } from "../../src/util/log.ts";
import {
	callTool,
	connectClient,
	startStack,
	testClient,
	untilMachinesOnline,
} from "../helpers/stack.ts";

const TOKEN = "agent-token-0123456789abcdef";
const PROMPT = "say hi and mention the secret word pelican";

describe("the tool call log line", () => {
	it("names the client, tool, machine, thread, result and duration, without the prompt", async () => {
		const lines: string[] = [];
		const stack = await startStack({
			clients: [testClient("agent", TOKEN)],
			log: createLogger("info", (line) => lines.push(line)),
		});
		try {
			const client = await connectClient(stack.server.mcpUrl, {
				authorization: `Bearer ${TOKEN}`,
			});
			await untilMachinesOnline(client);
			const dispatched = await callTool<{ thread_id: string }>(
				client,
				"t3_dispatch",
				{ machine: "demo", project: "demo", prompt: PROMPT },
			);
			expect(dispatched.isError).toBe(false);
			const refused = await callTool(client, "t3_thread", {
				thread_id: "no-such-thread",
			});
			expect(refused.isError).toBe(true);
			await client.close();

			const calls = lines
				.map((l) => JSON.parse(l) as Record<string, unknown>)
				.filter((l) => l.msg === "tool call");
			const dispatch = calls.filter((l) => l.tool === "t3_dispatch");
			expect(dispatch).toHaveLength(1);
			expect(dispatch[0]).toMatchObject({
				level: "info",
				client: "agent",
				machine: "demo",
				thread: dispatched.data.thread_id,
				result: "ok",
			});
			expect(typeof dispatch[0]?.ms).toBe("number");
			const read = calls.find((l) => l.tool === "t3_thread");
			expect(read).toMatchObject({
				client: "agent",
				thread: "no-such-thread",
				result: "error",
			});
			const all = lines.join("\n");
			expect(all).not.toContain("pelican");
			expect(all).not.toContain(TOKEN);
		} finally {
			await stack.stop();
		}
	});
});
