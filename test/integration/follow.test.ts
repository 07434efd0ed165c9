/**
 * Thread following end to end (issue 11): a watched run and an open t3_wait are followed on the
 * thread's own stream, so outcomes and questions reach t3_wait and the webhook from the stream's
 * rows with no projection GET (counted on the simulator), and a dropped stream resumes with
 * `afterSequence` without missing the outcome. The shell coalesces in 300 ms windows here, so
 * whatever arrives first is unambiguously the thread stream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	connect,
	dispatchPayload,
	firstProjectId,
	launchPayload,
} from "../../src/sim/test-client.ts";
import {
	type Delivery,
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import { callTool, type Stack, startStack, until } from "../helpers/stack.ts";

let receiver: Receiver;
let stack: Stack;
let client: Client;

beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		machines: [{ name: "demo", sim: { coalesceMs: 300 } }],
		server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
	});
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

const forThread = (id: string): Delivery[] =>
	receiver.deliveries.filter((d) => d.body.thread_id === id);
const machine = () => {
	const entry = stack.server.services.fleet.get("demo");
	if (!entry) throw new Error("no machine demo");
	return entry.machine;
};
const projectionGets = () =>
	stack.sim().stats().requests["GET /api/orchestration/threads/:id"] ?? 0;
const threadSubscriptions = () =>
	stack.sim().stats().requests["orchestration.subscribeThread"] ?? 0;

async function dispatch(prompt: string) {
	const result = await callTool<{ thread_id: string; run_id: string }>(
		client,
		"t3_dispatch",
		{ machine: "demo", project: "demo", prompt },
	);
	expect(result.isError).toBe(false);
	return result.data;
}

/** The thread is followed and its stream has caught up. */
async function untilFollowed(subscriptions: number) {
	await until(
		() =>
			threadSubscriptions() >= subscriptions &&
			(machine().followStats?.().live ?? 0) >= 1,
		10_000,
		"thread followed",
	);
}

describe("thread following", () => {
	test("a completion reaches t3_wait and the webhook from the thread stream, with no projection GET", async () => {
		const gets0 = projectionGets();
		const subs0 = threadSubscriptions();
		const d = await dispatch("long task");
		await untilFollowed(subs0 + 1);
		const waiting = callTool<{
			outcome: string;
			run_id: string;
			message: string;
		}>(client, "t3_wait", { thread_id: d.thread_id, timeout: 20 });
		await until(
			() => stack.sim().projection(d.thread_id) !== undefined,
			1_000,
			"run known",
		);
		stack.sim().finishRun(d.thread_id);
		const { data } = await waiting;
		expect(data).toMatchObject({
			outcome: "completed",
			run_id: d.run_id,
			message: "The long task is done.",
		});
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"completion event",
		);
		expect(forThread(d.thread_id)[0]?.body).toMatchObject({
			type: "thread.completed",
			run_id: d.run_id,
			message: "The long task is done.",
		});
		expect(projectionGets()).toBe(gets0);
		const metrics = await (await fetch(`${stack.server.url}/metrics`)).text();
		expect(metrics).toContain('t3code_mcp_followed_threads{machine="demo"}');
		expect(metrics).toContain(
			't3code_mcp_follow_fallbacks_total{machine="demo"} 0',
		);
	});

	test("a question reaches t3_wait and the webhook from the thread stream, with no projection GET", async () => {
		const gets0 = projectionGets();
		const d = await dispatch("ask me a question");
		const { data } = await callTool<{
			outcome: string;
			question: { kind: string; questions: { id: string; text: string }[] };
		}>(client, "t3_wait", { thread_id: d.thread_id, timeout: 20 });
		expect(data.outcome).toBe("question");
		expect(data.question).toMatchObject({
			kind: "user_input",
			questions: [{ id: "color", text: "Which color should I use?" }],
		});
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"question event",
		);
		expect(forThread(d.thread_id)[0]?.body).toMatchObject({
			type: "thread.question",
			question: { questions: [{ id: "color" }] },
		});
		expect(projectionGets()).toBe(gets0);
		await callTool(client, "t3_answer", {
			thread_id: d.thread_id,
			answers: { color: "Red" },
		});
		const done = await callTool<{ outcome: string; message: string }>(
			client,
			"t3_wait",
			{ thread_id: d.thread_id, timeout: 20 },
		);
		expect(done.data).toMatchObject({
			outcome: "completed",
			message: "You chose red.",
		});
	});

	test("a thread stream dropped mid-run resumes after its sequence and the outcome is not missed", async () => {
		const subs0 = threadSubscriptions();
		const d = await dispatch("long task");
		await untilFollowed(subs0 + 1);
		stack.sim().record(true);
		stack.sim().dropSockets();
		await until(
			() => threadSubscriptions() >= subs0 + 2,
			10_000,
			"thread stream resubscribed",
		);
		await untilFollowed(subs0 + 2);
		stack.sim().record(false);
		const resumed = stack
			.sim()
			.frames()
			.map(
				(f) => f.frame as { tag?: string; payload?: Record<string, unknown> },
			)
			.filter((f) => f.tag === "orchestration.subscribeThread");
		expect(resumed.at(-1)?.payload).toMatchObject({
			threadId: d.thread_id,
			afterSequence: expect.any(Number),
		});
		const gets0 = projectionGets();
		const waiting = callTool<{ outcome: string; run_id: string }>(
			client,
			"t3_wait",
			{ thread_id: d.thread_id, timeout: 20 },
		);
		stack.sim().finishRun(d.thread_id);
		expect((await waiting).data).toMatchObject({
			outcome: "completed",
			run_id: d.run_id,
		});
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"completion event",
		);
		await stack.server.services.events.tracker.idle();
		await stack.server.services.events.delivery.idle();
		expect(forThread(d.thread_id).map((e) => e.body.type)).toEqual([
			"thread.completed",
		]);
		expect(projectionGets()).toBe(gets0);
	});

	test("a run another client starts on a watched thread is read from its new subscription, not a projection GET", async () => {
		const d = await dispatch("long task");
		await untilFollowed(threadSubscriptions());
		stack.sim().finishRun(d.thread_id);
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"first completion",
		);
		await stack.server.services.events.tracker.idle();
		// Settled: its stream is closed once the shell has caught up.
		await until(
			() => (machine().followStats?.().followed ?? 1) === 0,
			10_000,
			"stream retired",
		);
		const gets0 = projectionGets();
		const subs0 = threadSubscriptions();
		// Another T3 client starts the next run: only the shell tells the connector.
		const other = await connect(stack.sim());
		try {
			const exit = await other.call(
				"orchestration.dispatchCommand",
				dispatchPayload(d.thread_id, "long task"),
			);
			expect(exit._tag).toBe("Success");
			await until(
				() => threadSubscriptions() > subs0,
				10_000,
				"the new run followed",
			);
			await stack.server.services.events.tracker.idle();
			stack.sim().finishRun(d.thread_id);
			await until(
				() => forThread(d.thread_id).length === 2,
				10_000,
				"second completion",
			);
		} finally {
			other.close();
		}
		await stack.server.services.events.tracker.idle();
		expect(forThread(d.thread_id).map((e) => e.body.type)).toEqual([
			"thread.completed",
			"thread.completed",
		]);
		expect(projectionGets()).toBe(gets0);
	});

	test("a long thread is followed from a bounded window: its run's outcome is read from memory, other reads GET it whole", async () => {
		// Twelve turns made by another T3 client, so the connector never followed them.
		const other = await connect(stack.sim());
		const runs = () =>
			(
				(stack.sim().projection(threadId) as {
					runs: { status: string }[];
				}) ?? { runs: [] }
			).runs;
		const settled = (n: number) => () =>
			runs().length === n && runs().every((r) => r.status === "completed");
		const launch = launchPayload(await firstProjectId(stack.sim()), "hello");
		const threadId = launch.threadId;
		try {
			expect(
				(await other.call("orchestration.launchThread", launch))._tag,
			).toBe("Success");
			await until(settled(1), 10_000, "turn 1");
			for (let n = 2; n <= 12; n++) {
				expect(
					(
						await other.call(
							"orchestration.dispatchCommand",
							dispatchPayload(threadId, "hello"),
						)
					)._tag,
				).toBe("Success");
				await until(settled(n), 10_000, `turn ${n}`);
			}
		} finally {
			other.close();
		}
		const subs0 = threadSubscriptions();
		const { data: d, isError } = await callTool<{ run_id: string }>(
			client,
			"t3_dispatch",
			{ thread_id: threadId, prompt: "long task" },
		);
		expect(isError).toBe(false);
		await untilFollowed(subs0 + 1);
		const gets0 = projectionGets(); // a follow-up's dispatch reads the thread itself
		// The window holds the latest 10 turns: served to a reader it covers, GET for the rest.
		const recent = await machine().getThread(threadId, { covers: () => true });
		expect(recent.projection.runs).toHaveLength(10);
		expect(projectionGets()).toBe(gets0);
		const whole = await machine().getThread(threadId);
		expect(whole.projection.runs).toHaveLength(13);
		expect(projectionGets()).toBe(gets0 + 1);
		const waiting = callTool<{
			outcome: string;
			run_id: string;
			message: string;
		}>(client, "t3_wait", { thread_id: threadId, timeout: 20 });
		await stack.server.services.events.tracker.idle();
		stack.sim().finishRun(threadId);
		expect((await waiting).data).toMatchObject({
			outcome: "completed",
			run_id: d.run_id,
			message: "The long task is done.",
		});
		await until(
			() => forThread(threadId).length === 1,
			10_000,
			"completion event",
		);
		expect(forThread(threadId)[0]?.body).toMatchObject({
			type: "thread.completed",
			run_id: d.run_id,
			message: "The long task is done.",
		});
		expect(projectionGets()).toBe(gets0 + 1);
	});
});
