/**
 * Queue control end to end (official MCP client → server → simulators over real sockets):
 * t3_thread lists queued follow-ups with their text; t3_manage edit_queued rewrites one before
 * it runs (and it runs the new text), cancel_queued drops one (it never runs); a run that
 * started or ended is refused with what to do instead; bad arguments name themselves; the
 * pre-release engine, which lacks queued-run.edit, says so and still cancels.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { TRUNCATION_MARKER } from "../../src/t3/derive/derive.ts";
import { MASK } from "../../src/util/redact.ts";
import { type Receiver, TEST_SECRET } from "../helpers/receiver.ts";
import { callTool, type Stack, untilRunning } from "../helpers/stack.ts";
import { startTwoEngines, stopTwoEngines } from "../helpers/two-engines.ts";

type Dispatched = { thread_id: string; run_id: string; queued: boolean };
type Queued = { run_id: string; text: string; held: boolean };
type Managed = {
	thread_id: string;
	action: string;
	changed: boolean;
	note: string | null;
};
type SimRun = { id: string; status: string; startedAt: string | null };

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
const queuedOf = async (threadId: string) =>
	(
		await callTool<{ queued: Queued[] }>(client, "t3_thread", {
			thread_id: threadId,
		})
	).data.queued;
const simRuns = (machine: string, threadId: string) =>
	(stack.sim(machine).projection(threadId) as { runs: SimRun[] }).runs;

/** A "long task" running on `machine` with follow-ups queued behind it. */
async function busyWithQueue(followUps: string[], machine = "demo") {
	const busy = await dispatch({ prompt: "long task" }, machine);
	await untilRunning(client, busy.thread_id);
	const queued: Dispatched[] = [];
	for (const prompt of followUps) {
		const q = await dispatch({ thread_id: busy.thread_id, prompt });
		expect(q.queued).toBe(true);
		queued.push(q);
	}
	return { busy, queued };
}

describe("queue control", () => {
	test("t3_thread lists queued follow-ups; an edited one runs its new text, a cancelled one never runs", async () => {
		const { busy, queued } = await busyWithQueue([
			"first follow-up",
			"second follow-up",
		]);
		const [first, second] = queued as [Dispatched, Dispatched];
		const thread = busy.thread_id;
		expect(await queuedOf(thread)).toEqual([
			{ run_id: first.run_id, text: "first follow-up", held: false },
			{ run_id: second.run_id, text: "second follow-up", held: false },
		]);

		const edited = await manage(thread, "edit_queued", {
			run_id: first.run_id,
			prompt: "edited follow-up",
		});
		expect(edited.isError).toBe(false);
		expect(edited.data).toMatchObject({
			thread_id: thread,
			action: "edit_queued",
			changed: true,
			note: null,
		});
		const cancel = {
			run_id: second.run_id,
			idempotency_key: "cancel-second",
		};
		const cancelled = await manage(thread, "cancel_queued", cancel);
		expect(cancelled.isError).toBe(false);
		expect(cancelled.data).toMatchObject({
			action: "cancel_queued",
			changed: true,
		});
		// A retry with the same key returns the first result instead of a refusal.
		const replay = await manage(thread, "cancel_queued", cancel);
		expect(replay.isError).toBe(false);
		expect(replay.data).toEqual(cancelled.data);
		// Without the key, cancelling it again says it is already done.
		const again = await manage(thread, "cancel_queued", {
			run_id: second.run_id,
		});
		expect(again.isError).toBe(true);
		expect(again.text).toContain("already cancelled");

		expect(await queuedOf(thread)).toEqual([
			{ run_id: first.run_id, text: "edited follow-up", held: false },
		]);

		// The running run cannot be changed: the refusal says what works instead.
		for (const action of ["cancel_queued", "edit_queued"]) {
			const started = await manage(thread, action, {
				run_id: busy.run_id,
				...(action === "edit_queued" ? { prompt: "too late" } : {}),
			});
			expect(started.isError).toBe(true);
			expect(started.text).toContain(
				`run "${busy.run_id}" of thread "${thread}" has already started (its status is running)`,
			);
			expect(started.text).toContain("t3_interrupt");
			expect(started.text).toContain('t3_dispatch mode "steer"');
		}

		// The latest message was cancelled: the wait follows the run that will still run.
		const pending = await callTool<{ outcome: string }>(client, "t3_wait", {
			thread_id: thread,
			timeout: 0,
		});
		expect(pending.data.outcome).toBe("timeout");
		stack.sim("demo").finishRun(thread);
		const w = await callTool<{
			outcome: string;
			run_id: string;
			message: string;
		}>(client, "t3_wait", { thread_id: thread, timeout: 20 });
		expect(w.data).toMatchObject({
			outcome: "completed",
			run_id: first.run_id,
			message: "Hello from the T3 simulator. You said: edited follow-up",
		});
		const runs = simRuns("demo", thread);
		expect(runs.find((r) => r.id === second.run_id)).toMatchObject({
			status: "cancelled",
			startedAt: null,
		});
		expect(await queuedOf(thread)).toEqual([]);

		// Once it ran, editing it is refused before anything is sent.
		const late = await manage(thread, "edit_queued", {
			run_id: first.run_id,
			prompt: "later",
		});
		expect(late.isError).toBe(true);
		expect(late.text).toContain("already ran (its status is completed)");
		expect(late.text).toContain("t3_dispatch");
	});

	test("queued texts are masked and capped like messages", async () => {
		const long = `${"y".repeat(9_000)} end`;
		const { busy, queued } = await busyWithQueue([
			`use ${TEST_SECRET} here`,
			long,
		]);
		const [secret, capped] = (await queuedOf(busy.thread_id)) as [
			Queued,
			Queued,
		];
		expect(secret).toEqual({
			run_id: (queued[0] as Dispatched).run_id,
			text: `use ${MASK} here`,
			held: false,
		});
		expect(capped.text.endsWith(TRUNCATION_MARKER)).toBe(true);
		expect(capped.text.length).toBeLessThan(long.length);
		stack.sim("demo").finishRun(busy.thread_id);
	});

	test("bad arguments are refused by name, before anything is sent", async () => {
		const { busy, queued } = await busyWithQueue(["a queued follow-up"]);
		const [q] = queued as [Dispatched];
		const thread = busy.thread_id;
		const cases: [Record<string, unknown>, string, string][] = [
			[{}, "cancel_queued", 'run_id: required for action "cancel_queued"'],
			[
				{ prompt: "x" },
				"edit_queued",
				'run_id: required for action "edit_queued"',
			],
			[
				{ run_id: q.run_id },
				"edit_queued",
				'prompt: required for action "edit_queued"',
			],
			[
				{ run_id: q.run_id, prompt: " \u0000\n\u200b " },
				"edit_queued",
				"prompt: must not be empty",
			],
			[
				{ run_id: q.run_id, prompt: "x" },
				"cancel_queued",
				'prompt: only used with action "edit_queued"',
			],
			[{ run_id: q.run_id }, "archive", "run_id: only used with actions"],
			[{ run_id: "run-nope" }, "cancel_queued", 'has no run "run-nope"'],
			[{ run_id: "../x" }, "cancel_queued", "run_id"],
			[{ run_id: "" }, "edit_queued", "run_id"],
		];
		for (const [extra, action, message] of cases) {
			const r = await manage(thread, action, extra);
			expect(r.isError).toBe(true);
			expect(r.text).toContain(message);
		}
		expect(await queuedOf(thread)).toEqual([
			{ run_id: q.run_id, text: "a queued follow-up", held: false },
		]);
		stack.sim("demo").finishRun(thread);
	});

	test("the pre-release engine has no queued-run.edit: a clear error; cancel still works", async () => {
		const { busy, queued } = await busyWithQueue(["old follow-up"], "old");
		const [q] = queued as [Dispatched];
		const thread = busy.thread_id;
		const edit = await manage(thread, "edit_queued", {
			run_id: q.run_id,
			prompt: "new text",
		});
		expect(edit.isError).toBe(true);
		expect(edit.text).toContain(
			'this T3 server (machine "old") does not support editing a queued run (queued-run.edit',
		);
		expect(edit.text).toContain("cancel_queued");
		expect(await queuedOf(thread)).toEqual([
			{ run_id: q.run_id, text: "old follow-up", held: false },
		]);
		const cancel = await manage(thread, "cancel_queued", { run_id: q.run_id });
		expect(cancel.isError).toBe(false);
		expect(cancel.data.changed).toBe(true);
		expect(await queuedOf(thread)).toEqual([]);
		expect(simRuns("old", thread).find((r) => r.id === q.run_id)?.status).toBe(
			"cancelled",
		);
		stack.sim("old").finishRun(thread);
	});
});
