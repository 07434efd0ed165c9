/**
 * T3's thread tools end to end (official MCP client → server → simulators over real sockets,
 * CONTRACT.md "T3's thread tools"): t3_manage reorder_queued and promote_queued on a busy
 * thread, pin / unpin / snooze / unsnooze / mark_unread with `pinned` and `snoozed_until` on
 * t3_thread, t3_threads and the result; each refusal says what to do; the pre-release engine
 * (no pins, no mark-unread) says its T3 lacks the action; idempotency keys on every new action.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import type { Receiver } from "../helpers/receiver.ts";
import { callTool, type Stack, until, untilRunning } from "../helpers/stack.ts";
import { startTwoEngines, stopTwoEngines } from "../helpers/two-engines.ts";

type Dispatched = { thread_id: string; run_id: string; queued: boolean };
type Queued = { run_id: string; text: string; held: boolean };
type Managed = {
	thread_id: string;
	action: string;
	status: string;
	archived: boolean;
	pinned: boolean;
	changed: boolean;
	note: string | null;
};
type SimRun = {
	id: string;
	status: string;
	queuePosition?: number | null;
	startedAt: string | null;
};
type Frame = { _tag?: string; tag?: string; payload?: Record<string, unknown> };

let receiver: Receiver;
let stack: Stack;
let client: Client;
beforeAll(async () => {
	({ receiver, stack, client } = await startTwoEngines());
});
afterAll(() => stopTwoEngines({ stack, receiver }));

const dispatch = async (args: Record<string, unknown>, machine = "demo") => {
	const d = await callTool<Dispatched>(
		client,
		"t3_dispatch",
		args.thread_id ? args : { machine, project: "demo", ...args },
	);
	expect(d.isError).toBe(false);
	return d.data;
};
const manage = (threadId: string, action: string, extra = {}) =>
	callTool<Managed>(client, "t3_manage", {
		thread_id: threadId,
		action,
		...extra,
	});
const threadOf = async (threadId: string) =>
	(
		await callTool<{
			queued: Queued[];
			pinned: boolean;
			snoozed_until: string | null;
		}>(client, "t3_thread", { thread_id: threadId })
	).data;
const rowOf = async (threadId: string, machine = "demo") =>
	(
		await callTool<{
			threads: { thread_id: string; pinned: boolean }[];
		}>(client, "t3_threads", { machine, limit: 100 })
	).data.threads.find((t) => t.thread_id === threadId);
const simProjection = (machine: string, threadId: string) =>
	stack.sim(machine).projection(threadId) as {
		runs: SimRun[];
		thread: Record<string, unknown>;
		turnItems: { inputIntent?: string; text?: string }[];
	};

/** Where the simulator's recorded frames end now: `sent` counts from there. */
function mark(machine = "demo"): number {
	stack.sim(machine).record(true);
	return stack.sim(machine).frames().length;
}

/** The dispatchCommand payloads of `type` the simulator received since `from` (mark()). */
function sent(
	machine: string,
	type: string,
	from: number,
): Record<string, unknown>[] {
	return stack
		.sim(machine)
		.frames()
		.slice(from)
		.filter((f) => f.dir === "recv")
		.flatMap((f) => (Array.isArray(f.frame) ? f.frame : [f.frame]) as Frame[])
		.filter(
			(m) =>
				m._tag === "Request" &&
				m.tag === "orchestration.dispatchCommand" &&
				m.payload?.type === type,
		)
		.map((m) => m.payload as Record<string, unknown>);
}

/** A "long task" running on `machine` with follow-ups queued behind it. */
async function busyWithQueue(followUps: string[], machine = "demo") {
	const busy = await dispatch({ prompt: "long task" }, machine);
	await untilRunning(client, busy.thread_id);
	const queued: string[] = [];
	for (const prompt of followUps) {
		const q = await dispatch({ thread_id: busy.thread_id, prompt });
		expect(q.queued).toBe(true);
		queued.push(q.run_id);
	}
	return { thread: busy.thread_id, running: busy.run_id, queued };
}

async function completedThread(machine = "demo") {
	const d = await dispatch({ prompt: "say hi" }, machine);
	const w = await callTool<{ outcome: string }>(client, "t3_wait", {
		thread_id: d.thread_id,
		timeout: 20,
	});
	expect(w.data.outcome).toBe("completed");
	return d.thread_id;
}

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe("reorder_queued and promote_queued", () => {
	test("reorder_queued puts the second follow-up first, and the queue runs in that order", async () => {
		const { thread, queued } = await busyWithQueue([
			"first follow-up",
			"second follow-up",
			"third follow-up",
		]);
		const [a, b, c] = queued as [string, string, string];
		const from = mark();
		const r = await manage(thread, "reorder_queued", {
			run_id: b,
			before_run_id: a,
		});
		expect(r.isError).toBe(false);
		expect(r.data).toMatchObject({
			thread_id: thread,
			action: "reorder_queued",
			changed: true,
			pinned: false,
		});
		expect(sent("demo", "queued-run.reorder", from)).toEqual([
			expect.objectContaining({ threadId: thread, runId: b, beforeRunId: a }),
		]);
		expect((await threadOf(thread)).queued.map((q) => q.run_id)).toEqual([
			b,
			a,
			c,
		]);
		// null (or no before_run_id) moves it last.
		const last = await manage(thread, "reorder_queued", {
			run_id: b,
			before_run_id: null,
		});
		expect(last.isError).toBe(false);
		expect(sent("demo", "queued-run.reorder", from).at(-1)).toMatchObject({
			runId: b,
			beforeRunId: null,
		});
		expect((await threadOf(thread)).queued.map((q) => q.run_id)).toEqual([
			a,
			c,
			b,
		]);
		const positions = simProjection("demo", thread)
			.runs.filter((r) => r.status === "queued")
			.map((r) => [r.id, r.queuePosition]);
		expect(positions.sort()).toEqual(
			[
				[a, 1],
				[c, 2],
				[b, 3],
			].sort(),
		);
		stack.sim("demo").finishRun(thread);
		await until(() =>
			simProjection("demo", thread).runs.every((r) => r.status === "completed"),
		);
		const runs = simProjection("demo", thread).runs;
		const started = (id: string) =>
			Date.parse(runs.find((r) => r.id === id)?.startedAt as string);
		expect(started(a)).toBeLessThanOrEqual(started(c));
		expect(started(c)).toBeLessThanOrEqual(started(b));
		expect((await threadOf(thread)).queued).toEqual([]);
	});

	test("promote_queued: the message leaves queued and the running run receives it", async () => {
		const { thread, running, queued } = await busyWithQueue([
			"use the staging database",
		]);
		const [q] = queued as [string];
		const from = mark();
		const p = await manage(thread, "promote_queued", { run_id: q });
		expect(p.isError).toBe(false);
		expect(p.data).toMatchObject({ action: "promote_queued", changed: true });
		expect(sent("demo", "queued-message.promote-to-steer", from)).toEqual([
			expect.objectContaining({
				threadId: thread,
				queuedRunId: q,
				targetRunId: running,
			}),
		]);
		expect((await threadOf(thread)).queued).toEqual([]);
		const projection = simProjection("demo", thread);
		expect(projection.runs.find((r) => r.id === q)?.status).toBe("cancelled");
		expect(
			projection.turnItems.find(
				(i) => i.inputIntent === "promoted_queued_to_steer",
			)?.text,
		).toBe("use the staging database");
		stack.sim("demo").finishRun(thread);
		const w = await callTool<{
			outcome: string;
			run_id: string;
			message: string;
		}>(client, "t3_wait", { thread_id: thread, timeout: 20 });
		expect(w.data).toMatchObject({ outcome: "completed", run_id: running });
		expect(w.data.message).toContain("Also handled: use the staging database");
	});

	test("refusals say what to do, and nothing is sent", async () => {
		const { thread, running, queued } = await busyWithQueue(["a", "b"]);
		const [a] = queued as [string, string];
		const from = mark();
		const cases: [string, Record<string, unknown>, string[]][] = [
			[
				"reorder_queued",
				{ run_id: running, before_run_id: null },
				[
					`run "${running}" of thread "${thread}" is not queued`,
					"only a queued run can be reordered",
				],
			],
			[
				"reorder_queued",
				{ run_id: a, before_run_id: running },
				["before_run_id:", "is not queued"],
			],
			["reorder_queued", { run_id: a, before_run_id: a }, ["before_run_id"]],
			["reorder_queued", {}, ['run_id: required for action "reorder_queued"']],
			[
				"promote_queued",
				{ run_id: running },
				["is not queued", "only a queued run can be promoted"],
			],
			["promote_queued", { run_id: "run-nope" }, ['has no run "run-nope"']],
			[
				"promote_queued",
				{ run_id: a, before_run_id: null },
				['before_run_id: only used with action "reorder_queued"'],
			],
			["pin", { until: inAnHour() }, ['until: only used with action "snooze"']],
		];
		for (const [action, extra, texts] of cases) {
			const r = await manage(thread, action, extra);
			expect(r.isError).toBe(true);
			for (const t of texts) expect(r.text).toContain(t);
		}
		// The queue is held: resume it first.
		const stopped = await callTool(client, "t3_interrupt", {
			thread_id: thread,
			hold_queue: true,
		});
		expect(stopped.isError).toBe(false);
		const held = await manage(thread, "promote_queued", { run_id: a });
		expect(held.isError).toBe(true);
		expect(held.text).toContain("is held");
		expect(held.text).toContain('action "resume_queue"');
		expect(sent("demo", "queued-run.reorder", from)).toEqual([]);
		expect(sent("demo", "queued-message.promote-to-steer", from)).toEqual([]);
		expect((await manage(thread, "resume_queue")).isError).toBe(false);
	});

	test("T3's own refusal of a promote (the run ended meanwhile) says to dispatch normally", async () => {
		const { thread, queued } = await busyWithQueue(["late"]);
		const [q] = queued as [string];
		stack.sim("demo").refuseNextCommand("queued-message.promote-to-steer");
		const r = await manage(thread, "promote_queued", { run_id: q });
		expect(r.isError).toBe(true);
		expect(r.text).toContain(
			`T3 machine "demo" refused promote_queued on thread "${thread}"`,
		);
		stack.sim("demo").finishRun(thread);
		await callTool(client, "t3_wait", { thread_id: thread, timeout: 20 });
	});
});

describe("pin, unpin, snooze, unsnooze, mark_unread", () => {
	test("pin makes t3_thread and t3_threads pinned: true, unpin false", async () => {
		const thread = await completedThread();
		expect((await threadOf(thread)).pinned).toBe(false);
		expect((await rowOf(thread))?.pinned).toBe(false);
		const pinned = await manage(thread, "pin");
		expect(pinned.isError).toBe(false);
		expect(pinned.data).toMatchObject({
			action: "pin",
			pinned: true,
			changed: true,
		});
		expect((await threadOf(thread)).pinned).toBe(true);
		expect((await rowOf(thread))?.pinned).toBe(true);
		const unpinned = await manage(thread, "unpin");
		expect(unpinned.data).toMatchObject({ action: "unpin", pinned: false });
		expect((await threadOf(thread)).pinned).toBe(false);
		expect((await rowOf(thread))?.pinned).toBe(false);
	});

	test("snooze sets snoozed_until, unsnooze clears it; a pin clears a snooze", async () => {
		const thread = await completedThread();
		const from = mark();
		const until_ = "2099-06-01T09:00:00+02:00";
		const s = await manage(thread, "snooze", { until: until_ });
		expect(s.isError).toBe(false);
		expect(sent("demo", "thread.snooze", from)).toEqual([
			expect.objectContaining({
				threadId: thread,
				snoozedUntil: "2099-06-01T07:00:00.000Z",
			}),
		]);
		expect((await threadOf(thread)).snoozed_until).toBe(
			"2099-06-01T07:00:00.000Z",
		);
		const u = await manage(thread, "unsnooze");
		expect(u.isError).toBe(false);
		expect(sent("demo", "thread.unsnooze", from)).toEqual([
			expect.objectContaining({ threadId: thread, reason: "user" }),
		]);
		expect((await threadOf(thread)).snoozed_until).toBeNull();
		await manage(thread, "snooze", { until: inAnHour() });
		await manage(thread, "pin");
		expect(await threadOf(thread)).toMatchObject({
			pinned: true,
			snoozed_until: null,
		});
	});

	test("mark_unread sends thread.mark-unread; T3 sets the thread's last visit before its latest run", async () => {
		const thread = await completedThread();
		const from = mark();
		const m = await manage(thread, "mark_unread");
		expect(m.isError).toBe(false);
		expect(m.data).toMatchObject({ action: "mark_unread", changed: true });
		expect(sent("demo", "thread.mark-unread", from)).toEqual([
			{
				type: "thread.mark-unread",
				commandId: expect.any(String),
				threadId: thread,
			},
		]);
		expect(simProjection("demo", thread).thread.lastVisitedAt).toEqual(
			expect.any(String),
		);
	});

	test("refusals: snooze in the past or not a time is refused before sending; T3's refusals say what to do", async () => {
		const thread = await completedThread();
		const from = mark();
		const past = await manage(thread, "snooze", {
			until: "2001-01-01T00:00:00Z",
		});
		expect(past.isError).toBe(true);
		expect(past.text).toContain("is in the past");
		const junk = await manage(thread, "snooze", { until: "tomorrow" });
		expect(junk.text).toContain("is not an ISO time");
		const none = await manage(thread, "snooze");
		expect(none.text).toContain('until: required for action "snooze"');
		expect(sent("demo", "thread.snooze", from)).toEqual([]);

		// T3 refuses to snooze a thread with queued follow-ups.
		const { thread: busy } = await busyWithQueue(["next"]);
		const queued = await manage(busy, "snooze", { until: inAnHour() });
		expect(queued.isError).toBe(true);
		expect(queued.text).toContain(`T3 machine "demo" refused snooze`);
		expect(queued.text).toContain("cancel_queued");
		stack.sim("demo").finishRun(busy);
		await callTool(client, "t3_wait", { thread_id: busy, timeout: 20 });

		// T3 pins no archived thread: unarchive first.
		expect((await manage(thread, "archive")).isError).toBe(false);
		const pin = await manage(thread, "pin");
		expect(pin.isError).toBe(true);
		expect(pin.text).toContain("refused pin");
		expect(pin.text).toContain('"unarchive"');
	});
});

describe("the pre-release engine", () => {
	test("no pins nor mark-unread: an error naming the machine; reorder, promote and snooze work", async () => {
		const thread = await completedThread("old");
		for (const [action, type] of [
			["pin", "thread.pin"],
			["unpin", "thread.unpin"],
			["mark_unread", "thread.mark-unread"],
		] as const) {
			const r = await manage(thread, action);
			expect(r.isError).toBe(true);
			expect(r.text).toContain(`(machine "old") does not support`);
			expect(r.text).toContain(type);
			expect(r.text).toContain(`its T3 lacks the ${action} action`);
		}
		expect((await threadOf(thread)).pinned).toBe(false);
		expect((await rowOf(thread, "old"))?.pinned).toBe(false);
		const s = await manage(thread, "snooze", { until: inAnHour() });
		expect(s.isError).toBe(false);
		expect(s.data.pinned).toBe(false);

		const {
			thread: busy,
			running,
			queued,
		} = await busyWithQueue(["one", "two"], "old");
		const [a, b] = queued as [string, string];
		const r = await manage(busy, "reorder_queued", {
			run_id: b,
			before_run_id: a,
		});
		expect(r.isError).toBe(false);
		expect((await threadOf(busy)).queued.map((q) => q.run_id)).toEqual([b, a]);
		const p = await manage(busy, "promote_queued", { run_id: a });
		expect(p.isError).toBe(false);
		expect((await threadOf(busy)).queued.map((q) => q.run_id)).toEqual([b]);
		stack.sim("old").finishRun(busy);
		const w = await callTool<{ run_id: string }>(client, "t3_wait", {
			thread_id: busy,
			timeout: 20,
		});
		expect(w.data.run_id).not.toBe(running);
	});
});

describe("idempotency keys", () => {
	test("every new action: a repeat with the same key returns the first result and sends nothing", async () => {
		const { thread, queued } = await busyWithQueue(["x", "y"]);
		const [x, y] = queued as [string, string];
		const calls: [string, Record<string, unknown>, string][] = [
			["reorder_queued", { run_id: y, before_run_id: x }, "queued-run.reorder"],
			["promote_queued", { run_id: x }, "queued-message.promote-to-steer"],
			["pin", {}, "thread.pin"],
			["unpin", {}, "thread.unpin"],
		];
		const from = mark();
		for (const [action, extra, type] of calls) {
			const args = { ...extra, idempotency_key: `key-${action}-${thread}` };
			const first = await manage(thread, action, args);
			expect(first.isError).toBe(false);
			const again = await manage(thread, action, args);
			expect(again.isError).toBe(false);
			expect(again.data).toEqual(first.data);
			expect(sent("demo", type, from)).toHaveLength(1);
			// The same key with other arguments is refused.
			const other = await manage(thread, action, {
				...args,
				...(action === "reorder_queued" ? { before_run_id: null } : {}),
				...(action === "promote_queued" ? { run_id: y } : {}),
				...(action === "pin" || action === "unpin"
					? { action: "unsnooze" }
					: {}),
			});
			expect(other.isError).toBe(true);
			expect(other.text).toContain("different arguments");
		}
		stack.sim("demo").finishRun(thread);
		await callTool(client, "t3_wait", { thread_id: thread, timeout: 20 });
		await until(async () => (await threadOf(thread)).queued.length === 0);

		const done = await completedThread();
		const later: [string, Record<string, unknown>, string][] = [
			["snooze", { until: inAnHour() }, "thread.snooze"],
			["unsnooze", {}, "thread.unsnooze"],
			["mark_unread", {}, "thread.mark-unread"],
		];
		for (const [action, extra, type] of later) {
			const args = { ...extra, idempotency_key: `key-${action}-${done}` };
			const first = await manage(done, action, args);
			expect(first.isError).toBe(false);
			const again = await manage(done, action, args);
			expect(again.data).toEqual(first.data);
			expect(
				sent("demo", type, from).filter((c) => c.threadId === done),
			).toHaveLength(1);
		}
	});
});
