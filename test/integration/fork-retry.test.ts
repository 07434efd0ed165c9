/**
 * A keyed fork is safe to repeat (issue 18, MCP client → server → sims over real sockets): when
 * the fork was made but its message was refused, or the fork itself was refused, a retry with
 * the same idempotency_key makes exactly one fork and runs the prompt once in it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { callTool, type Stack, startStack } from "../helpers/stack.ts";

type Dispatched = {
	thread_id: string;
	run_id: string | null;
	runtime_mode: string;
	forked_from: string | null;
};
type Read = {
	runs: { id: string; messages: { role: string; text: string }[] }[];
};

let stack: Stack;
let client: Client;
beforeAll(async () => {
	stack = await startStack({
		machines: [
			{ name: "demo", sim: {} },
			{ name: "old", sim: { compat: "prerelease" } },
		],
	});
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
});

async function settledSource(machine: string): Promise<string> {
	const d = await callTool<Dispatched>(client, "t3_dispatch", {
		machine,
		project: "demo",
		prompt: "the word is pineapple",
	});
	expect(d.isError).toBe(false);
	const w = await callTool(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 20,
	});
	expect(w.data).toMatchObject({ outcome: "completed" });
	return d.data.thread_id;
}

/** The threads on the simulator forked from `source`. */
function forksOf(source: string): string[] {
	const sim = stack.sim("demo");
	return sim.threadIds().filter((id) => {
		const p = sim.projection(id) as {
			thread: { lineage?: { parentThreadId?: string } };
		};
		return p.thread.lineage?.parentThreadId === source;
	});
}

describe("a keyed fork retried", () => {
	test("after its message was refused: the same fork, the message sent once", async () => {
		const source = await settledSource("demo");
		const args = {
			fork_of: source,
			prompt: "what do you remember",
			idempotency_key: "fork-message-refused",
		};
		stack.sim("demo").refuseNextCommand("message.dispatch");
		const refused = await callTool(client, "t3_dispatch", args);
		expect([refused.isError, refused.text]).toEqual([
			true,
			expect.stringContaining('Machine "demo" refused the dispatch'),
		]);
		expect(forksOf(source)).toHaveLength(1);

		const retry = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect([retry.isError, retry.text]).toEqual([false, expect.any(String)]);
		expect(retry.data.forked_from).toBe(source);
		expect(forksOf(source)).toEqual([retry.data.thread_id]);
		const again = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect(again.data).toMatchObject({
			thread_id: retry.data.thread_id,
			run_id: retry.data.run_id,
			forked_from: source,
		});

		const w = await callTool(client, "t3_wait", {
			thread_id: retry.data.thread_id,
			timeout: 20,
		});
		expect(w.data).toMatchObject({ outcome: "completed" });
		const read = await callTool<Read>(client, "t3_thread", {
			thread_id: retry.data.thread_id,
			turns: 5,
		});
		expect(read.data.runs.map((r) => r.id)).toEqual([
			retry.data.run_id as string,
		]);
		expect(read.data.runs[0]?.messages.at(-1)?.text).toContain(
			"user: the word is pineapple",
		);
		expect(forksOf(source)).toHaveLength(1);
	});

	test("after the fork itself was refused: a retry forks once", async () => {
		const source = await settledSource("demo");
		const args = {
			fork_of: source,
			prompt: "say hello",
			idempotency_key: "fork-refused",
		};
		stack.sim("demo").refuseNextCommand("thread.fork");
		const refused = await callTool(client, "t3_dispatch", args);
		expect([refused.isError, refused.text]).toEqual([
			true,
			expect.stringContaining('fork_of: machine "demo" refused to fork'),
		]);
		expect(forksOf(source)).toEqual([]);

		const retry = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect([retry.isError, retry.text]).toEqual([false, expect.any(String)]);
		expect(forksOf(source)).toEqual([retry.data.thread_id]);
		const again = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect(again.data.thread_id).toBe(retry.data.thread_id);
		expect(forksOf(source)).toHaveLength(1);
	});

	test("after the machine dropped on the fork's reply: the same fork, once", async () => {
		const source = await settledSource("demo");
		const args = {
			fork_of: source,
			prompt: "say hello",
			idempotency_key: "fork-dropped",
		};
		stack.sim("demo").dropNextReply("orchestration.dispatchCommand");
		const first = await callTool<Dispatched>(client, "t3_dispatch", args);
		const retry = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect([retry.isError, retry.text]).toEqual([false, expect.any(String)]);
		// The machine re-sends the same command over the new socket: T3 forks once either way.
		if (!first.isError) expect(first.data.thread_id).toBe(retry.data.thread_id);
		expect(forksOf(source)).toEqual([retry.data.thread_id]);
	});

	test("after a failure between the fork and its message: the same fork", async () => {
		const source = await settledSource("demo");
		// The mode change a fork sends before its message is what fails here.
		const args = {
			fork_of: source,
			prompt: "say hello",
			runtime_mode: "approval-required",
			idempotency_key: "fork-mode-refused",
		};
		stack.sim("demo").refuseNextCommand("thread.runtime-mode.set");
		const failed = await callTool(client, "t3_dispatch", args);
		expect(failed.isError).toBe(true);
		expect(forksOf(source)).toHaveLength(1);
		const retry = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect([retry.isError, retry.text]).toEqual([false, expect.any(String)]);
		expect(forksOf(source)).toEqual([retry.data.thread_id]);
		expect(retry.data).toMatchObject({
			forked_from: source,
			runtime_mode: "approval-required",
		});
	});

	test("two calls with one key at once: one fork, one run", async () => {
		const source = await settledSource("demo");
		const args = {
			fork_of: source,
			prompt: "say hello",
			idempotency_key: "fork-twice-at-once",
		};
		const [a, b] = await Promise.all([
			callTool<Dispatched>(client, "t3_dispatch", args),
			callTool<Dispatched>(client, "t3_dispatch", args),
		]);
		expect([a.isError, b.isError]).toEqual([false, false]);
		expect(b.data).toMatchObject({
			thread_id: a.data.thread_id,
			run_id: a.data.run_id,
		});
		expect(forksOf(source)).toEqual([a.data.thread_id]);
	});

	test("on the pre-release engine: 'does not support' each time, the key left free", async () => {
		const source = await settledSource("old");
		const args = {
			fork_of: source,
			prompt: "what do you remember",
			idempotency_key: "fork-old",
		};
		for (let i = 0; i < 2; i++) {
			const fork = await callTool(client, "t3_dispatch", args);
			expect([fork.isError, fork.text]).toEqual([
				true,
				expect.stringContaining(
					'fork_of: this T3 server (machine "old") does not support forking threads',
				),
			]);
		}
	});
});
