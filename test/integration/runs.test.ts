/**
 * Exact run semantics end to end (MCP client → server → simulators over real sockets):
 * interrupting with follow-ups queued (held or not, and on a server without queue holding),
 * `t3_wait` with `timeout: 0`, blank free-text answers, and threads that vanish from their
 * machine (deleted elsewhere, or the server lost its state) versus our own delete.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { resumeQueue } from "../../src/threads/control/queue.ts";
import { activeWaits } from "../../src/threads/wait/wait.ts";
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

type Dispatched = { thread_id: string; run_id: string; queued: boolean };
type Waited = {
	thread_id: string;
	outcome: string;
	run_id: string | null;
	run_status: string | null;
	message: string | null;
	error: string | null;
	question: { request_id: string } | null;
	elapsed_s: number;
};
type Interrupted = {
	thread_id: string;
	run_id: string | null;
	run_status: string;
	queued: { run_id: string; held: boolean }[];
	interrupted: boolean;
};
type SimRun = {
	id: string;
	status: string;
	startedAt: string | null;
	completedAt: string | null;
};

let receiver: Receiver;
let stack: Stack;
beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		machines: [
			{ name: "demo" },
			// A server without queue holding, like the pre-release one of captures-v2 ws-busy.jsonl.
			{ name: "plain", sim: { queueHolding: false } },
			// Restarted with its state lost; kept apart so other tests' threads survive.
			{ name: "lossy" },
		],
		server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
	});
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

const dispatch = async (
	client: Client,
	args: Record<string, unknown>,
	machine = "demo",
) => {
	const d = await callTool<Dispatched>(
		client,
		"t3_dispatch",
		args.thread_id ? args : { machine, project: "demo", ...args },
	);
	expect(d.isError).toBe(false);
	return d.data;
};
const wait = (client: Client, args: Record<string, unknown>) =>
	callTool<Waited>(client, "t3_wait", { timeout: 20, ...args });
const interrupt = (client: Client, args: Record<string, unknown>) =>
	callTool<Interrupted>(client, "t3_interrupt", args);
const simRuns = (machine: string, threadId: string) =>
	(stack.sim(machine).projection(threadId) as { runs: SimRun[] }).runs;
const forThread = (id: string): Delivery[] =>
	receiver.deliveries.filter((d) => d.body.thread_id === id);
async function settle(): Promise<void> {
	await stack.server.services.events.tracker.idle();
	await stack.server.services.events.delivery.idle();
}

/** A "long task" running on `machine` with follow-ups queued behind it. */
async function busyWithQueue(
	client: Client,
	followUps: string[],
	machine = "demo",
) {
	const busy = await dispatch(client, { prompt: "long task" }, machine);
	await untilRunning(client, busy.thread_id);
	const queued: Dispatched[] = [];
	for (const prompt of followUps) {
		const q = await dispatch(client, { thread_id: busy.thread_id, prompt });
		expect(q.queued).toBe(true);
		queued.push(q);
	}
	return { busy, queued };
}

describe("interrupt with follow-ups queued", () => {
	test("by default the queued follow-ups then start, in order", async () => {
		const client = await stack.client();
		const { busy, queued } = await busyWithQueue(client, [
			"first follow-up",
			"second follow-up",
		]);
		const i = await interrupt(client, { thread_id: busy.thread_id });
		expect(i.isError).toBe(false);
		expect(i.data).toEqual({
			thread_id: busy.thread_id,
			run_id: busy.run_id,
			run_status: expect.any(String),
			queued: queued.map((q) => ({ run_id: q.run_id, held: false })),
			interrupted: true,
		});
		expect(i.text).toContain("start in order");
		const w = await wait(client, { thread_id: busy.thread_id });
		expect(w.data).toMatchObject({
			outcome: "completed",
			run_id: queued[1]?.run_id,
			message: "Hello from the T3 simulator. You said: second follow-up",
		});
		const [first, second, third] = simRuns("demo", busy.thread_id) as [
			SimRun,
			SimRun,
			SimRun,
		];
		expect([first.status, second.status, third.status]).toEqual([
			"interrupted",
			"completed",
			"completed",
		]);
		expect(Date.parse(third.startedAt ?? "")).toBeGreaterThanOrEqual(
			Date.parse(second.completedAt ?? ""),
		);
	});

	test("hold_queue keeps them until resume_queue; a wait on a held run returns at once saying so", async () => {
		const client = await stack.client();
		const { busy, queued } = await busyWithQueue(client, ["held follow-up"]);
		const [q] = queued as [Dispatched];
		const i = await interrupt(client, {
			thread_id: busy.thread_id,
			hold_queue: true,
		});
		expect(i.isError).toBe(false);
		expect(i.data).toMatchObject({
			run_id: busy.run_id,
			queued: [{ run_id: q.run_id, held: true }],
		});
		expect(i.text).toContain("resume_queue");

		const w = await wait(client, { thread_id: busy.thread_id, timeout: 30 });
		expect(w.data).toMatchObject({
			outcome: "timeout",
			run_id: q.run_id,
			run_status: "queued",
		});
		expect(w.data.elapsed_s).toBeLessThan(10);
		expect(w.text).toContain("queue is held");
		// T3 0.1.x also holds a queue after a server restart: the cause is named neutrally.
		expect(w.text).toContain(
			`Run ${q.run_id} is queued and its queue is held (interrupt or server restart): it will not start until t3_manage with action "resume_queue".`,
		);

		// Nothing runs now: interrupting the held queued run is an error that says what to do.
		const again = await interrupt(client, { thread_id: busy.thread_id });
		expect(again.isError).toBe(true);
		expect(again.text).toContain("held");
		expect(again.text).toContain("resume_queue");

		const resumed = await resumeQueue(
			stack.server.services.threadDeps,
			busy.thread_id,
		);
		expect(resumed.queued).toEqual([]);
		const done = await wait(client, { thread_id: busy.thread_id });
		expect(done.data).toMatchObject({ outcome: "completed", run_id: q.run_id });
	});

	test("on a server without queue holding, hold_queue cannot hold: follow-ups start and resume_queue says why not", async () => {
		const client = await stack.client();
		const { busy, queued } = await busyWithQueue(
			client,
			["plain follow-up"],
			"plain",
		);
		const [q] = queued as [Dispatched];
		const i = await interrupt(client, {
			thread_id: busy.thread_id,
			hold_queue: true,
		});
		expect(i.data.queued).toEqual([{ run_id: q.run_id, held: false }]);
		expect(i.text).toContain("queue holding");
		const w = await wait(client, { thread_id: busy.thread_id });
		expect(w.data).toMatchObject({ outcome: "completed", run_id: q.run_id });
		expect(
			resumeQueue(stack.server.services.threadDeps, busy.thread_id),
		).rejects.toThrow('T3 machine "plain" does not support queue holding');
	});
});

describe("t3_wait timeout 0", () => {
	test("returns the outcome that already happened: completed", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "say hi" });
		expect((await wait(client, { thread_id: d.thread_id })).data.outcome).toBe(
			"completed",
		);
		const now = await wait(client, { thread_id: d.thread_id, timeout: 0 });
		expect(now.data).toMatchObject({
			outcome: "completed",
			run_id: d.run_id,
			message: "Hello from the T3 simulator. You said: say hi",
		});
	});

	test("returns a pending question", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "ask me a question" });
		const q = await wait(client, { thread_id: d.thread_id });
		expect(q.data.outcome).toBe("question");
		const now = await wait(client, { thread_id: d.thread_id, timeout: 0 });
		expect(now.data.outcome).toBe("question");
		expect(now.data.question?.request_id).toBe(
			q.data.question?.request_id as string,
		);
		await interrupt(client, { thread_id: d.thread_id });
	});

	test("still times out at once on a run that is going", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "long task" });
		await untilRunning(client, d.thread_id);
		const now = await wait(client, { thread_id: d.thread_id, timeout: 0 });
		expect(now.data.outcome).toBe("timeout");
		await interrupt(client, { thread_id: d.thread_id });
	});
});

test("an empty string is not an answer to a free-text question", async () => {
	const client = await stack.client();
	const d = await dispatch(client, { prompt: "ask me a question" });
	expect((await wait(client, { thread_id: d.thread_id })).data.outcome).toBe(
		"question",
	);
	for (const blank of ["", "   "]) {
		const a = await callTool(client, "t3_answer", {
			thread_id: d.thread_id,
			answers: { color: blank },
		});
		expect(a.isError).toBe(true);
		expect(a.text).toContain("answers.color");
		expect(a.text).toContain("empty answer");
	}
	// Still pending: a real answer goes through.
	const ok = await callTool(client, "t3_answer", {
		thread_id: d.thread_id,
		answers: { color: "Blue" },
	});
	expect(ok.isError).toBe(false);
	expect((await wait(client, { thread_id: d.thread_id })).data.outcome).toBe(
		"completed",
	);
});

describe("vanished threads", () => {
	const expectMissing = (data: Waited | Record<string, unknown>) => {
		expect(data).toMatchObject({
			run_id: null,
			run_status: "missing",
		});
		expect(String(data.error)).toContain("is gone from machine");
	};
	/** A running "long task" with a t3_wait open on it (not yet returned). */
	const waitingOnLongTask = async (client: Client) => {
		const d = await dispatch(client, { prompt: "long task" });
		await untilRunning(client, d.thread_id);
		const before = activeWaits();
		const pending = wait(client, { thread_id: d.thread_id, timeout: 60 });
		await until(() => activeWaits() > before, 10_000, "the wait to be open");
		return { d, pending };
	};

	test("deleted elsewhere: the open wait returns at once, and one thread.failed event says missing", async () => {
		const client = await stack.client();
		const { d, pending } = await waitingOnLongTask(client);
		stack.sim("demo").deleteThread(d.thread_id);
		const w = await pending;
		expect(w.isError).toBe(false);
		expect(w.data.outcome).toBe("failed");
		expect(w.data.elapsed_s).toBeLessThan(30);
		expectMissing(w.data);
		await until(() => forThread(d.thread_id).length > 0, 10_000, "event");
		await settle();
		const events = forThread(d.thread_id);
		expect(events).toHaveLength(1);
		expect(events[0]?.body).toMatchObject({
			type: "thread.failed",
			machine: "demo",
			project: { title: "demo", path: "/srv/t3/demo" },
		});
		expectMissing(events[0]?.body as Record<string, unknown>);
	});

	test("the server lost its state: catch-up after the reconnect reports it once, and a new wait says missing", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "say hi" }, "lossy");
		expect((await wait(client, { thread_id: d.thread_id })).data.outcome).toBe(
			"completed",
		);
		await until(() => forThread(d.thread_id).length === 1, 10_000, "event");
		await stack.sim("lossy").restart({ loseState: true });
		await until(() => forThread(d.thread_id).length === 2, 15_000, "missing");
		await settle();
		const events = forThread(d.thread_id);
		expect(events.map((e) => e.body.type)).toEqual([
			"thread.completed",
			"thread.failed",
		]);
		expect(events[1]?.body.thread_seq).toBe(2);
		expectMissing(events[1]?.body as Record<string, unknown>);
		const w = await wait(client, { thread_id: d.thread_id });
		expect(w.isError).toBe(false);
		expect(w.data.outcome).toBe("failed");
		expectMissing(w.data);
		// Listed as missing, not with the status it had before.
		const watch = await callTool<{
			unwatched: { thread_id: string; status: string | null }[];
		}>(client, "t3_watch", {});
		expect(
			watch.data.unwatched.find((t) => t.thread_id === d.thread_id),
		).toMatchObject({ status: "missing" });
		const threads = await callTool<{
			threads: { thread_id: string; status: string }[];
		}>(client, "t3_threads", { machine: "lossy" });
		expect(threads.data.threads).toEqual([
			expect.objectContaining({
				thread_id: d.thread_id,
				status: "missing",
				state: "settled",
				project: expect.objectContaining({ title: "demo" }),
			}),
		]);
		const inProject = await callTool<{ threads: { thread_id: string }[] }>(
			client,
			"t3_threads",
			{ project: "demo" },
		);
		expect(inProject.data.threads.map((t) => t.thread_id)).toContain(
			d.thread_id,
		);
	});

	test("not watched when it vanished: t3_watch and t3_threads say missing, with no event; archived ones keep their status", async () => {
		const client = await stack.client();
		const gone = await dispatch(client, { prompt: "say hi" }, "lossy");
		const kept = await dispatch(client, { prompt: "say hi" }, "lossy");
		for (const d of [gone, kept])
			expect(
				(await wait(client, { thread_id: d.thread_id })).data.outcome,
			).toBe("completed");
		await until(() => forThread(kept.thread_id).length === 1, 10_000, "event");
		const off = await callTool(client, "t3_watch", {
			thread_id: gone.thread_id,
			enabled: false,
		});
		expect(off.isError).toBe(false);
		const archived = await callTool(client, "t3_manage", {
			thread_id: kept.thread_id,
			action: "archive",
		});
		expect(archived.isError).toBe(false);
		const machine = () => stack.server.services.fleet.get("lossy")?.machine;
		await until(() => !machine()?.thread(kept.thread_id), 10_000, "archive");
		const statusOf = async (id: string) =>
			(
				await callTool<{
					unwatched: { thread_id: string; status: string | null }[];
				}>(client, "t3_watch", {})
			).data.unwatched.find((t) => t.thread_id === id)?.status;
		// A catch-up with the state intact: the archived thread is not taken for a vanished one.
		let syncs = 0;
		const unsubscribe = machine()?.onChange((change) => {
			if (change.kind === "synchronized") syncs++;
		});
		await stack.sim("lossy").restart();
		await until(() => syncs > 0, 15_000, "the catch-up");
		unsubscribe?.();
		await settle();
		expect(await statusOf(kept.thread_id)).toBe("completed");
		expect(await statusOf(gone.thread_id)).toBe("completed");
		await stack.sim("lossy").restart({ loseState: true });
		await until(
			async () => (await statusOf(gone.thread_id)) === "missing",
			15_000,
			"missing in t3_watch",
		);
		const threads = await callTool<{
			threads: { thread_id: string; status: string }[];
		}>(client, "t3_threads", { machine: "lossy" });
		expect(
			threads.data.threads.find((t) => t.thread_id === gone.thread_id),
		).toMatchObject({ status: "missing" });
		await settle();
		// Unwatched: silent, as any change to it would have been.
		expect(forThread(gone.thread_id)).toHaveLength(1);
	}, 40_000);

	test("deleted while the connector was down: the catch-up at start reports it once", async () => {
		let client = await stack.client();
		const d = await dispatch(client, { prompt: "say hi" });
		expect((await wait(client, { thread_id: d.thread_id })).data.outcome).toBe(
			"completed",
		);
		await until(() => forThread(d.thread_id).length === 1, 10_000, "event");
		await settle();
		await stack.stopServer();
		stack.sim("demo").deleteThread(d.thread_id);
		await stack.restartServer();
		await until(() => forThread(d.thread_id).length === 2, 15_000, "missing");
		await settle();
		const events = forThread(d.thread_id);
		expect(events.map((e) => e.body.type)).toEqual([
			"thread.completed",
			"thread.failed",
		]);
		expectMissing(events[1]?.body as Record<string, unknown>);
		client = await stack.client();
		expectMissing((await wait(client, { thread_id: d.thread_id })).data);
	});

	test("our own delete is not vanishing: no event, and an open wait says it was deleted", async () => {
		const client = await stack.client();
		const { d, pending } = await waitingOnLongTask(client);
		const machine = stack.server.services.fleet.get("demo")?.machine;
		const deleted = await callTool(client, "t3_delete", {
			thread_id: d.thread_id,
		});
		expect(deleted.data).toEqual({ thread_id: d.thread_id, deleted: true });
		const w = await pending;
		expect(w.isError).toBe(true);
		expect(w.text).toContain("was deleted with t3_delete");
		await until(() => !machine?.thread(d.thread_id), 10_000, "shell removal");
		await settle();
		expect(forThread(d.thread_id)).toHaveLength(0);
		const listed = await callTool<{
			watched: { thread_id: string }[];
			unwatched: { thread_id: string }[];
		}>(client, "t3_watch");
		expect(
			[...listed.data.watched, ...listed.data.unwatched].map(
				(t) => t.thread_id,
			),
		).not.toContain(d.thread_id);
	});

	test("archiving is not vanishing: no event, also after a restart's catch-up, and a wait says completed", async () => {
		let client = await stack.client();
		const d = await dispatch(client, { prompt: "say hi" });
		expect((await wait(client, { thread_id: d.thread_id })).data.outcome).toBe(
			"completed",
		);
		await until(() => forThread(d.thread_id).length === 1, 10_000, "event");
		const archived = await callTool(client, "t3_manage", {
			thread_id: d.thread_id,
			action: "archive",
		});
		expect(archived.isError).toBe(false);
		const machine = stack.server.services.fleet.get("demo")?.machine;
		await until(() => !machine?.thread(d.thread_id), 10_000, "shell removal");
		await settle();
		// The catch-up at start looks at every watched thread the shell does not list.
		await stack.restartServer();
		client = await stack.client();
		const w = await wait(client, { thread_id: d.thread_id, timeout: 0 });
		expect(w.isError).toBe(false);
		expect(w.data).toMatchObject({
			outcome: "completed",
			run_id: d.run_id,
			run_status: "completed",
		});
		await settle();
		expect(forThread(d.thread_id).map((e) => e.body.type)).toEqual([
			"thread.completed",
		]);
	});
});
