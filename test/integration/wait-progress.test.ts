/**
 * `t3_wait` progress through the real server, the official MCP client and the simulator, with the
 * server's clock injected: a wait that begins 35 s into a run says 35 s (not 0), counts on from
 * there as the clock moves, and names the run's current step; a timeout's text says the same
 * while its `elapsed_s` stays the wait's own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createManualClock } from "../../src/util/clock.ts";
import { callTool, type Stack, startStack, until } from "../helpers/stack.ts";

const clock = createManualClock(Date.now());
let stack: Stack;
beforeAll(async () => {
	stack = await startStack({ clock, progressIntervalMs: 10_000 });
});
afterAll(async () => {
	await stack.stop();
});

/** "elapsed N s" of a progress line or text, as a number. */
const elapsedIn = (text: string) =>
	Number(/(\d+) s elapsed since the run started/.exec(text)?.[1] ?? Number.NaN);

describe("t3_wait progress", () => {
	test("elapsed from the run's start and its current step, in progress and in a timeout", async () => {
		const client = await stack.client();
		// A client tool call: the run stays on it (a step with a title) until it is resolved elsewhere.
		const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "call a client tool",
		});
		expect(d.isError).toBe(false);
		const threadId = d.data.thread_id;
		// The first wait reports the request nobody here can answer; later waits wait past it.
		const asked = await callTool<{ outcome: string }>(client, "t3_wait", {
			thread_id: threadId,
			timeout: 30,
		});
		expect(asked.data.outcome).toBe("question");

		// 35 s go by on the server's clock (caught up with real time first: the run started in it).
		clock.advance(Date.now() - clock.now() + 35_000);
		const looked = await callTool<{ outcome: string; elapsed_s: number }>(
			client,
			"t3_wait",
			{ thread_id: threadId, timeout: 0 },
		);
		expect(looked.data.outcome).toBe("timeout");
		expect(looked.data.elapsed_s).toBe(0);
		expect(looked.text).toContain("step: open_preview");
		expect(elapsedIn(looked.text)).toBeGreaterThanOrEqual(35);
		expect(elapsedIn(looked.text)).toBeLessThan(40);

		const lines: string[] = [];
		const pending = callTool<{ outcome: string }>(
			client,
			"t3_wait",
			{ thread_id: threadId, timeout: 600 },
			{
				onprogress: (p) => {
					lines.push(String((p as { message?: string }).message ?? ""));
				},
			},
		);
		await until(() => lines.length >= 1, 10_000, "a first progress line");
		const first = elapsedIn(lines[0] as string);
		expect(first).toBeGreaterThanOrEqual(35);
		expect(lines[0]).toContain("step: open_preview");
		clock.advance(10_000);
		await until(() => lines.length >= 2, 10_000, "a second progress line");
		expect(elapsedIn(lines[1] as string)).toBe(first + 10);

		stack.sim().finishRun(threadId);
		expect((await pending).data.outcome).toBe("completed");
	});
});
