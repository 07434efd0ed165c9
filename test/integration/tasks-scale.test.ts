/**
 * 1 000 open MCP tasks (issue 19): under 10 MB of heap, and no timer per task (open tasks share
 * one listener per machine and one deadline timer). Timers are counted by wrapping the timer
 * functions while the tasks are created: live ones = set and not cleared.
 */

import { heapStats } from "bun:jsc";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Stack, startStack } from "../helpers/stack.ts";
import { rawRequest } from "../helpers/tasks-client.ts";

let stack: Stack;
beforeAll(async () => {
	stack = await startStack();
});
afterAll(() => stack?.stop());

const TASKS = 1_000;
const THREADS = 10;

function countLiveTimers() {
	const live = new Set<unknown>();
	const saved = {
		setTimeout: globalThis.setTimeout,
		clearTimeout: globalThis.clearTimeout,
		setInterval: globalThis.setInterval,
		clearInterval: globalThis.clearInterval,
	};
	const wrapSet =
		(set: typeof setTimeout) =>
		(...args: Parameters<typeof setTimeout>) => {
			const id = set(...args);
			live.add(id);
			return id;
		};
	const wrapClear = (clear: typeof clearTimeout) => (id: unknown) => {
		live.delete(id);
		clear(id as Parameters<typeof clearTimeout>[0]);
	};
	globalThis.setTimeout = wrapSet(saved.setTimeout) as typeof setTimeout;
	globalThis.setInterval = wrapSet(
		saved.setInterval as typeof setTimeout,
	) as unknown as typeof setInterval;
	globalThis.clearTimeout = wrapClear(
		saved.clearTimeout,
	) as typeof clearTimeout;
	globalThis.clearInterval = wrapClear(
		saved.clearInterval as typeof clearTimeout,
	) as typeof clearInterval;
	return {
		live: () => live.size,
		restore() {
			Object.assign(globalThis, saved);
		},
	};
}

test("1 000 open tasks: under 10 MB, no timer or socket per task", async () => {
	const url = stack.server.mcpUrl;
	const threads: string[] = [];
	for (let i = 0; i < THREADS; i++) {
		const d = await rawRequest(url, "tools/call", {
			name: "t3_dispatch",
			arguments: { machine: "demo", project: "demo", prompt: "long task" },
		});
		threads.push(
			(d as unknown as { result: { structuredContent: { thread_id: string } } })
				.result.structuredContent.thread_id,
		);
	}
	// One task first, so what every task shares (listeners, the deadline timer) exists already.
	await rawRequest(url, "tools/call", {
		name: "t3_wait",
		arguments: { thread_id: threads[0] },
	});
	Bun.gc(true);
	const before = heapStats().heapSize;
	const timers = countLiveTimers();
	let created = 0;
	try {
		for (let batch = 0; batch < TASKS; batch += 100) {
			const replies = await Promise.all(
				Array.from({ length: 100 }, (_, i) =>
					rawRequest(url, "tools/call", {
						name: "t3_wait",
						arguments: { thread_id: threads[(batch + i) % THREADS] },
					}),
				),
			);
			for (const reply of replies)
				if (
					reply.kind === "result" &&
					(reply.result as { resultType?: string }).resultType === "task"
				)
					created++;
		}
		expect(created).toBe(TASKS);
		// Requests are over. A timer per task would leave 1 000; what is left is the server's
		// few shared ones and whatever else this process (sims, other suites' stacks) runs.
		expect(timers.live()).toBeLessThan(100);
	} finally {
		timers.restore();
	}
	Bun.gc(true);
	const grown = heapStats().heapSize - before;
	expect(grown).toBeLessThan(10 * 1024 * 1024);
	expect(stack.server.services.tasks.counts().working).toBe(TASKS + 1);
	for (const id of threads) stack.sim().finishRun(id);
});
