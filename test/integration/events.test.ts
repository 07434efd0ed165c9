/**
 * Events end to end: MCP client → server → simulator, and a loopback webhook receiver that
 * verifies Standard Webhooks signatures. Every transition of a watched thread arrives at least
 * once, in order per thread, with the origin of the dispatch that started its run.
 */
import {
	afterAll,
	afterEach,
	beforeAll,
	describe,
	expect,
	test,
} from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	type Delivery,
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilRunning,
} from "../helpers/stack.ts";

let receiver: Receiver;
let stack: Stack;

beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		machines: [{ name: "demo", sim: { coalesceMs: 5 } }],
		server: {
			hookUrl: receiver.url,
			hookToken: "hook-bearer",
			hookSecret: TEST_SECRET,
		},
	});
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});
afterEach(() => {
	receiver.setMode("ok");
});

const forThread = (id: string): Delivery[] =>
	receiver.deliveries.filter((d) => d.body.thread_id === id);

async function settle(): Promise<void> {
	await stack.server.services.events.tracker.idle();
	await stack.server.services.events.delivery.idle();
}

async function dispatch(client: Client, args: Record<string, unknown>) {
	const result = await callTool<{ thread_id: string; run_id: string }>(
		client,
		"t3_dispatch",
		{
			machine: "demo",
			project: "demo",
			...args,
		},
	);
	expect(result.isError).toBe(false);
	return result.data;
}

async function waitFor(client: Client, threadId: string) {
	return (
		await callTool<{ outcome: string; run_id: string }>(client, "t3_wait", {
			thread_id: threadId,
			timeout: 20,
		})
	).data;
}

describe("each event type", () => {
	test("completed: once, signed, with origin header and the contract body", async () => {
		const client = await stack.client({
			headers: { "X-Conversation-Origin": "conv-42" },
		});
		const d = await dispatch(client, { prompt: "say hello" });
		await until(() => forThread(d.thread_id).length === 1, 10_000, "delivery");
		await settle();
		const [delivery] = forThread(d.thread_id) as [Delivery];
		expect(forThread(d.thread_id)).toHaveLength(1);
		expect(delivery.verified).toBe(true);
		expect(delivery.headers.authorization).toBe("Bearer hook-bearer");
		expect(delivery.headers["x-conversation-origin"]).toBe("conv-42");
		expect(delivery.headers["content-type"]).toBe("application/json");
		expect(delivery.headers["webhook-id"]).toBe(delivery.body.id as string);
		expect(delivery.body).toMatchObject({
			type: "thread.completed",
			machine: "demo",
			thread_id: d.thread_id,
			project: { title: "demo", path: "/srv/t3/demo" },
			run_id: d.run_id,
			run_status: "completed",
			origin: "conv-42",
			thread_seq: 1,
			message: "Hello from the T3 simulator. You said: say hello",
			error: null,
			question: null,
		});
		expect(String(delivery.body.id)).toStartWith("evt_");
	});

	test("question then completed, in order per thread", async () => {
		const client = await stack.client({
			headers: { "X-Conversation-Origin": "conv-q" },
		});
		const d = await dispatch(client, { prompt: "ask me a question" });
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"question event",
		);
		expect(forThread(d.thread_id)[0]?.body).toMatchObject({
			type: "thread.question",
			run_id: d.run_id,
			origin: "conv-q",
			question: { kind: "user_input", questions: [{ id: "color" }] },
		});
		await callTool(client, "t3_answer", {
			thread_id: d.thread_id,
			answers: { color: "Red" },
		});
		await until(
			() => forThread(d.thread_id).length === 3,
			10_000,
			"answered and completion events",
		);
		await settle();
		expect(
			forThread(d.thread_id).map((e) => [e.body.type, e.body.thread_seq]),
		).toEqual([
			["thread.question", 1],
			["thread.answered", 2],
			["thread.completed", 3],
		]);
		// Who answered, and how (CONTRACT.md "Approval links"); a question has no decision.
		expect(forThread(d.thread_id)[1]?.body).toEqual({
			id: expect.stringMatching(/^evt_/),
			type: "thread.answered",
			occurred_at: expect.any(String),
			machine: "demo",
			thread_id: d.thread_id,
			thread_seq: 2,
			request_id: (
				forThread(d.thread_id)[0]?.body.question as
					| { request_id: string }
					| undefined
			)?.request_id,
			kind: "user_input",
			decision: null,
			client: "default",
			via: "mcp",
			origin: "conv-q",
		});
	});

	test("approvals are questions of kind approval; interrupted and failed have their types", async () => {
		const client = await stack.client();
		const approval = await dispatch(client, {
			prompt: "approve a command",
			runtime_mode: "approval-required",
		});
		const failing = await dispatch(client, { prompt: "fail please" });
		const long = await dispatch(client, { prompt: "long task" });
		await until(
			() => forThread(approval.thread_id).length === 1,
			10_000,
			"approval event",
		);
		expect(forThread(approval.thread_id)[0]?.body).toMatchObject({
			type: "thread.question",
			origin: null,
			question: { kind: "approval", prompt: "sim agent wants to list files" },
		});
		expect(
			forThread(approval.thread_id)[0]?.headers["x-conversation-origin"],
		).toBeUndefined();
		await until(
			() => forThread(failing.thread_id).length === 1,
			10_000,
			"failed event",
		);
		expect(forThread(failing.thread_id)[0]?.body).toMatchObject({
			type: "thread.failed",
			error: "sim agent failure",
		});
		await untilRunning(client, long.thread_id);
		await callTool(client, "t3_interrupt", { thread_id: long.thread_id });
		await until(
			() => forThread(long.thread_id).length === 1,
			10_000,
			"interrupted event",
		);
		expect(forThread(long.thread_id)[0]?.body).toMatchObject({
			type: "thread.interrupted",
			run_status: "interrupted",
		});
		await callTool(client, "t3_answer", {
			thread_id: approval.thread_id,
			decision: "decline",
		});
	});
});

describe("origins", () => {
	test("two concurrent origins, a continuation from a third and a call without the header", async () => {
		const a = await stack.client({
			headers: { "X-Conversation-Origin": "conv-a" },
		});
		const b = await stack.client({
			headers: { "X-Conversation-Origin": "conv-b" },
		});
		const c = await stack.client({
			headers: { "X-Conversation-Origin": "conv-c" },
		});
		const none = await stack.client();
		const [ta, tb] = await Promise.all([
			dispatch(a, { prompt: "from a" }),
			dispatch(b, { prompt: "from b" }),
		]);
		await until(
			() =>
				forThread(ta.thread_id).length === 1 &&
				forThread(tb.thread_id).length === 1,
			10_000,
			"a and b",
		);
		const cont = await callTool<{ run_id: string }>(c, "t3_dispatch", {
			thread_id: ta.thread_id,
			prompt: "from c",
		});
		await until(
			() => forThread(ta.thread_id).length === 2,
			10_000,
			"continuation event",
		);
		const plain = await callTool<{ run_id: string }>(none, "t3_dispatch", {
			thread_id: tb.thread_id,
			prompt: "no header",
		});
		await until(
			() => forThread(tb.thread_id).length === 2,
			10_000,
			"headerless event",
		);
		await settle();
		expect(
			forThread(ta.thread_id).map((e) => [
				e.body.run_id,
				e.body.origin,
				e.headers["x-conversation-origin"],
			]),
		).toEqual([
			[ta.run_id, "conv-a", "conv-a"],
			[cont.data.run_id, "conv-c", "conv-c"],
		]);
		expect(
			forThread(tb.thread_id).map((e) => [e.body.run_id, e.body.origin]),
		).toEqual([
			[tb.run_id, "conv-b"],
			[plain.data.run_id, null],
		]);
	});
});

describe("watching", () => {
	test("watch: false sends nothing; t3_watch turns it on with this call's origin", async () => {
		const client = await stack.client({
			headers: { "X-Conversation-Origin": "conv-silent" },
		});
		const d = await dispatch(client, { prompt: "quietly", watch: false });
		await waitFor(client, d.thread_id);
		await settle();
		expect(forThread(d.thread_id)).toHaveLength(0);
		const listed = await callTool<{ unwatched: { thread_id: string }[] }>(
			client,
			"t3_watch",
			{},
		);
		expect(listed.data.unwatched.map((t) => t.thread_id)).toContain(
			d.thread_id,
		);
		const watcher = await stack.client({
			headers: { "X-Conversation-Origin": "conv-watcher" },
		});
		const on = await callTool(watcher, "t3_watch", {
			thread_id: d.thread_id,
			enabled: true,
		});
		expect(on.data).toEqual({ thread_id: d.thread_id, watched: true });
		await settle();
		// The run that finished before watching stays silent; the next one reports to the watcher.
		expect(forThread(d.thread_id)).toHaveLength(0);
		const next = await callTool<{ origin: string | null }>(
			watcher,
			"t3_dispatch",
			{ thread_id: d.thread_id, prompt: "now loud" },
		);
		expect(next.data.origin).toBe("conv-watcher");
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"event after watch",
		);
		expect(forThread(d.thread_id)[0]?.body.origin).toBe("conv-watcher");
	});
});

describe("resuming an unwatched thread", () => {
	test("runs that settled while unwatched stay silent; the follow-up reports", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "first, watched" });
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"first event",
		);
		await callTool(client, "t3_watch", {
			thread_id: d.thread_id,
			enabled: false,
		});
		const quiet = await callTool<{ run_id: string }>(client, "t3_dispatch", {
			thread_id: d.thread_id,
			prompt: "second, unwatched",
			watch: false,
		});
		await waitFor(client, d.thread_id);
		const loud = await callTool<{ run_id: string }>(client, "t3_dispatch", {
			thread_id: d.thread_id,
			prompt: "third, watched again",
		});
		await until(
			() => forThread(d.thread_id).length === 2,
			10_000,
			"follow-up event",
		);
		await settle();
		expect(forThread(d.thread_id).map((e) => e.body.run_id)).toEqual([
			d.run_id,
			loud.data.run_id,
		]);
		expect(forThread(d.thread_id).map((e) => e.body.run_id)).not.toContain(
			quiet.data.run_id,
		);
	});
});

describe("coalescing and reconnects", () => {
	test("run N completes and queued N+1 starts in one coalescing window: one completed for N with N's message", async () => {
		const slowShell = await startStack({
			machines: [{ name: "demo", sim: { coalesceMs: 150 } }],
			server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
		});
		try {
			const client = await slowShell.client();
			const d = await callTool<{ thread_id: string; run_id: string }>(
				client,
				"t3_dispatch",
				{
					machine: "demo",
					project: "demo",
					prompt: "long task",
				},
			);
			const id = d.data.thread_id;
			await untilRunning(client, id);
			const next = await callTool<{ run_id: string }>(client, "t3_dispatch", {
				thread_id: id,
				prompt: "right after",
			});
			slowShell.sim().finishRun(id);
			await until(() => forThread(id).length === 2, 15_000, "both completions");
			await slowShell.server.services.events.tracker.idle();
			expect(
				forThread(id).map((e) => [e.body.type, e.body.run_id, e.body.message]),
			).toEqual([
				["thread.completed", d.data.run_id, "The long task is done."],
				[
					"thread.completed",
					next.data.run_id,
					"Hello from the T3 simulator. You said: right after",
				],
			]);
		} finally {
			await slowShell.stop();
		}
	});

	test("dropped sockets and a reconnect (snapshot + replay) create no new events", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "steady" });
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"first delivery",
		);
		const ids = receiver.deliveries.map((e) => e.body.id);
		const machine = stack.server.services.fleet.get("demo")?.machine;
		stack.sim().dropSockets();
		await until(() => machine?.status().state !== "online", 10_000, "offline");
		await until(() => machine?.status().state === "online", 15_000, "online");
		await settle();
		expect(receiver.deliveries.map((e) => e.body.id)).toEqual(ids);
	});

	test("a T3 restart mid-run cancels the run: one thread.interrupted", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "long task" });
		await untilRunning(client, d.thread_id);
		await stack.sim().restart();
		await until(
			() => forThread(d.thread_id).length === 1,
			20_000,
			"interrupted event",
		);
		await settle();
		expect(
			forThread(d.thread_id).map((e) => [e.body.type, e.body.run_status]),
		).toEqual([["thread.interrupted", "cancelled"]]);
	});

	test("catch-up: a run that completed while the connector was down still produces its event", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "long task" });
		await untilRunning(client, d.thread_id);
		await stack.stopServer();
		stack.sim().finishRun(d.thread_id);
		await until(() => stack.sim().projection(d.thread_id) !== undefined, 1000);
		await stack.restartServer();
		await until(
			() => forThread(d.thread_id).length === 1,
			20_000,
			"caught-up event",
		);
		expect(forThread(d.thread_id)[0]?.body).toMatchObject({
			type: "thread.completed",
			message: "The long task is done.",
		});
	});
});

describe("threads that go away", () => {
	test("an archived watched thread stops being tracked quietly", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "archive me later" });
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"completion event",
		);
		const machine = stack.server.services.fleet.get("demo")?.machine;
		await machine?.dispatch({
			type: "thread.archive",
			commandId: crypto.randomUUID(),
			threadId: d.thread_id,
		});
		await until(
			() =>
				stack.server.services.threadDeps.threads.get(d.thread_id)?.watched ===
				0,
			10_000,
			"watch to stop",
		);
		await settle();
		expect(forThread(d.thread_id)).toHaveLength(1);
		const listed = await callTool<{ unwatched: { thread_id: string }[] }>(
			client,
			"t3_watch",
			{},
		);
		expect(listed.data.unwatched.map((t) => t.thread_id)).toContain(
			d.thread_id,
		);
	});
});

describe("delivery failures", () => {
	test("410 dead-letters the event; /healthz shows it; replay delivers it", async () => {
		receiver.setMode({ status: 410 });
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "gone receiver" });
		await until(
			() =>
				stack.server.services.events.outbox.forThread(d.thread_id)[0]
					?.status === "dead",
			10_000,
			"dead",
		);
		const health = (await (
			await fetch(`${stack.server.url}/healthz`)
		).json()) as { outbox: { dead: number; last_error?: string } };
		expect(health.outbox.dead).toBeGreaterThanOrEqual(1);
		expect(health.outbox.last_error).toBe("HTTP 410: no");
		receiver.setMode("ok");
		const replay = await fetch(`${stack.server.url}/outbox/replay`, {
			method: "POST",
		});
		expect(
			((await replay.json()) as { replayed: number }).replayed,
		).toBeGreaterThanOrEqual(1);
		await until(
			() => forThread(d.thread_id).length === 1,
			10_000,
			"replayed delivery",
		);
	});
});

describe("contract", () => {
	test("the webhook body and headers are pinned", async () => {
		const client = await stack.client({
			headers: { "X-Conversation-Origin": "conv-snapshot" },
		});
		const d = await dispatch(client, { prompt: "pin me" });
		await until(() => forThread(d.thread_id).length === 1, 10_000, "delivery");
		const [delivery] = forThread(d.thread_id) as [Delivery];
		expect(delivery.body.app_url).toBe(`t3-thread://v1/${d.thread_id}`);
		const stable = {
			...delivery.body,
			id: "evt_…",
			occurred_at: "…",
			thread_id: "…",
			app_url: "t3-thread://v1/…",
			run_id: "…",
			project: { ...(delivery.body.project as object), id: "…" },
		};
		const headers = Object.keys(delivery.headers)
			.filter(
				(h) =>
					![
						"host",
						"connection",
						"accept",
						"accept-encoding",
						"content-length",
					].includes(h),
			)
			.sort();
		expect({ body: stable, headers }).toMatchSnapshot();
		expect(delivery.headers["webhook-signature"]).toMatch(
			/^v1,[A-Za-z0-9+/]+=*$/,
		);
		expect(Number(delivery.headers["webhook-timestamp"])).toBeGreaterThan(
			1_700_000_000,
		);
	});
});
