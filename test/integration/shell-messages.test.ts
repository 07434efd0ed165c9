/**
 * Shells without message bodies (MCP client → server → sims over real sockets): the newest T3
 * sends `latestVisibleMessage: null` on every thread shell ("Thread detail owns message bodies",
 * idx 70189692800; the sim's `shellWithoutMessages`). The `t3_wait` status line reads the latest
 * message from the thread it follows; `t3_threads` `query` finds message text through T3's
 * message search, and where a server has neither says only titles were searched. No text ever
 * shows "null".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { callTool, type Stack, startStack } from "../helpers/stack.ts";

type ThreadList = {
	threads: { thread_id: string; match: { snippet: string } | null }[];
	unavailable: { machine: string; state: string; reason: string | null }[];
};

let stack: Stack;
let client: Client;
beforeAll(async () => {
	stack = await startStack({
		machines: [
			{ name: "bare", sim: { shellWithoutMessages: true } },
			// No message search and no latest messages: a query can match only titles there.
			{
				name: "blind",
				sim: { compat: "prerelease", shellWithoutMessages: true },
			},
		],
		progressIntervalMs: 20,
	});
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
});

async function dispatch(machine: string, prompt: string, title: string) {
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine,
		project: "demo",
		title,
		prompt,
	});
	expect(d.isError).toBe(false);
	return d.data.thread_id;
}

/** The thread shells the sim serves (`GET /api/orchestration/shell`). */
async function simShells(machine: string) {
	const sim = stack.sim(machine);
	const response = await fetch(`${sim.url}/api/orchestration/shell`, {
		headers: {
			authorization: `Bearer ${sim.token}`,
			"x-t3-orchestration-protocol": "2",
		},
	});
	return ((await response.json()) as { threads: Record<string, unknown>[] })
		.threads;
}

describe("a T3 whose shells carry latestVisibleMessage: null", () => {
	test("the t3_wait status line reads the latest message of the followed thread", async () => {
		const threadId = await dispatch("bare", "long task", "plain title");
		const lines: string[] = [];
		let finished = false;
		const wait = await callTool<{ outcome: string }>(
			client,
			"t3_wait",
			{ thread_id: threadId, timeout: 30 },
			{
				onprogress: (p) => {
					const line = String((p as { message?: unknown }).message ?? "");
					lines.push(line);
					if (!finished && line.includes("latest: Working on the long task")) {
						finished = true;
						stack.sim("bare").finishRun(threadId);
					}
				},
			},
		);
		expect(wait.data.outcome).toBe("completed");
		expect(finished).toBe(true);
		expect(lines.filter((l) => l.includes("null"))).toEqual([]);
		const shell = (await simShells("bare")).find((t) => t.id === threadId);
		expect(shell).toMatchObject({ latestVisibleMessage: null });
	});

	test("t3_threads query finds a thread by its messages through T3's search", async () => {
		const threadId = await dispatch("bare", "note the axolotl", "untitled");
		await callTool(client, "t3_wait", { thread_id: threadId, timeout: 20 });
		const { data, isError } = await callTool<ThreadList>(client, "t3_threads", {
			machine: "bare",
			query: "axolotl",
		});
		expect(isError).toBe(false);
		expect(data.threads.map((t) => t.thread_id)).toEqual([threadId]);
		expect(data.threads[0]?.match?.snippet).toBe(
			"Hello from the T3 simulator. You said: note the axolotl",
		);
		expect(data.unavailable).toEqual([]);
	});

	test("a server with no message search either: titles still match, and the answer says only titles were searched", async () => {
		// Before any thread ran there it cannot tell: nothing is said. What a query found out is
		// kept only until the machine's threads change.
		const before = await callTool<ThreadList>(client, "t3_threads", {
			machine: "blind",
			query: "pangolin",
		});
		expect(before.data.unavailable).toEqual([]);
		const byTitle = await dispatch("blind", "say hi", "pangolin plans");
		const byMessage = await dispatch("blind", "note the pangolin", "other");
		for (const id of [byTitle, byMessage])
			await callTool(client, "t3_wait", { thread_id: id, timeout: 20 });
		const { data } = await callTool<ThreadList>(client, "t3_threads", {
			machine: "blind",
			query: "pangolin",
		});
		expect(data.threads.map((t) => t.thread_id)).toEqual([byTitle]);
		expect(data.unavailable).toEqual([
			{
				machine: "blind",
				state: "online",
				reason:
					"its messages cannot be searched: this T3 server has no message search and its thread list carries no latest messages (only titles were searched there)",
			},
		]);
	});
});
