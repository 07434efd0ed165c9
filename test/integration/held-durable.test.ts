/**
 * Held dispatches are durable and start exactly once (CONTRACT.md "One pool", "Holding"): faults
 * injected between the record and the send and between the send and marking it started (the
 * row is replayed to its machine only, with the same command: T3 answers the repeated commandId
 * with the original thread), a restart with held dispatches and with one left starting, Tasks on
 * a held dispatch, and a client losing reach or level by a reload while held.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import type { AppConfig } from "../../src/config/types.ts";
import { eventShape } from "../helpers/event-shape.ts";
import { offsetClock } from "../helpers/offset-clock.ts";
import { untilIdle } from "../helpers/pool.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	connectAs,
	type Stack,
	startStack,
	testClient,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";
import { rawRequest } from "../helpers/tasks-client.ts";

const TOKENS = {
	ops: "durable-ops-token-0123456789",
	r1: "durable-r1-token-0123456789",
	r2: "durable-r2-token-0123456789",
};

interface Dispatched {
	thread_id: string;
	machine: string | null;
	run_id: string | null;
	run_status: string;
	held: { position: number } | null;
}

type Fault = "throw-after-record" | "throw-after-send" | "hang-after-record";

describe("exactly once, across faults and restarts", () => {
	let stack: Stack;
	let ops: Client;
	const clock = offsetClock();
	let next: Fault | undefined;
	const faulted = new Set<string>();
	const take = (kind: string, id: string) => {
		if (!next?.endsWith(kind)) return undefined;
		const fault = next;
		next = undefined;
		faulted.add(id);
		return fault;
	};

	const dispatch = (extra: Record<string, unknown> = {}) =>
		callTool<Dispatched>(ops, "t3_dispatch", {
			machine: "*",
			project: "demo",
			prompt: "long task",
			...extra,
		});
	/** Threads with this id on x, and their runs. */
	const onX = (id: string) => {
		const has = stack
			.sim("x")
			.threadIds()
			.filter((t) => t === id).length;
		const runs =
			(stack.sim("x").projection(id) as { runs?: unknown[] } | undefined)?.runs
				?.length ?? 0;
		return { threads: has, runs };
	};
	const reconnect = async () => {
		await ops.close().catch(() => {});
		ops = await connectAs(stack, TOKENS.ops);
		await untilMachinesOnline(ops);
	};

	beforeAll(async () => {
		stack = await startStack({
			clock,
			machines: [{ name: "x", maxActiveRuns: 1 }],
			clients: [testClient("ops", TOKENS.ops, { access: "full-access" })],
			heldFaults: {
				async afterRecord(id) {
					const fault = take("after-record", id);
					if (fault === "throw-after-record") throw new Error("fault");
					if (fault === "hang-after-record") await new Promise<void>(() => {});
				},
				afterSend(id) {
					if (take("after-send", id)) throw new Error("fault");
				},
			},
		});
		ops = await connectAs(stack, TOKENS.ops);
		await untilMachinesOnline(ops);
	});
	afterAll(async () => {
		await ops?.close();
		await stack?.stop();
		clock.stop();
	});

	/** Until the connector shows x without a busy thread. */
	const idle = () => untilIdle(ops, "x idle");

	/** Holds one behind a busy x, then frees x; returns the held one's id. */
	async function holdThenFree(fault: Fault): Promise<string> {
		await idle();
		const busy = await dispatch({ machine: "x" });
		expect(busy.isError).toBe(false);
		const held = await dispatch({ prompt: "say hello" });
		expect(held.data.run_status).toBe("held");
		next = fault;
		stack.sim("x").finishRun(busy.data.thread_id);
		await until(() => faulted.has(held.data.thread_id), 10_000, "the fault");
		return held.data.thread_id;
	}

	test("a fault between the record and the send: replayed to its machine, started once", async () => {
		const id = await holdThenFree("throw-after-record");
		// Recorded, never sent.
		expect(onX(id).threads).toBe(0);
		clock.advance(6_000);
		await until(() => onX(id).threads === 1, 10_000, "the replay");
		const waited = await callTool<{ outcome: string }>(ops, "t3_wait", {
			thread_id: id,
			timeout: 30,
		});
		expect(waited.data.outcome).toBe("completed");
		expect(onX(id)).toEqual({ threads: 1, runs: 1 });
	});

	test("a fault between the send and marking it started: the same command again, one thread, one run", async () => {
		const id = await holdThenFree("throw-after-send");
		expect(onX(id).threads).toBe(1);
		clock.advance(6_000);
		const waited = await callTool<{ outcome: string }>(ops, "t3_wait", {
			thread_id: id,
			timeout: 30,
		});
		expect(waited.data.outcome).toBe("completed");
		const read = await callTool<{ held: unknown; machine: string }>(
			ops,
			"t3_thread",
			{ thread_id: id },
		);
		expect(read.data).toMatchObject({ held: null, machine: "x" });
		expect(onX(id)).toEqual({ threads: 1, runs: 1 });
	});

	test("a restart with held dispatches keeps them in order; one left starting is replayed once", async () => {
		await idle();
		const busy = await dispatch({ machine: "x" });
		const a = await dispatch({ prompt: "say hello" });
		const b = await dispatch({ prompt: "say hello" });
		expect([a.data.held?.position, b.data.held?.position]).toEqual([1, 2]);
		await stack.restartServer();
		await reconnect();
		const listed = await callTool<{
			threads: { thread_id: string; held: { position: number } }[];
		}>(ops, "t3_threads", { state: "held" });
		expect(
			listed.data.threads.map((t) => [t.thread_id, t.held.position]),
		).toEqual([
			[b.data.thread_id, 2],
			[a.data.thread_id, 1],
		]);
		// Nothing starts until a machine frees.
		expect(onX(a.data.thread_id).threads).toBe(0);
		// The launch of a is recorded and then the connector stops before sending it.
		next = "hang-after-record";
		stack.sim("x").finishRun(busy.data.thread_id);
		await until(() => faulted.has(a.data.thread_id), 10_000, "a recorded");
		await stack.restartServer();
		await reconnect();
		const waited = await callTool<{ outcome: string }>(ops, "t3_wait", {
			thread_id: a.data.thread_id,
			timeout: 30,
		});
		expect(waited.data.outcome).toBe("completed");
		expect(onX(a.data.thread_id)).toEqual({ threads: 1, runs: 1 });
		const second = await callTool<{ outcome: string }>(ops, "t3_wait", {
			thread_id: b.data.thread_id,
			timeout: 30,
		});
		expect(second.data.outcome).toBe("completed");
		expect(onX(b.data.thread_id)).toEqual({ threads: 1, runs: 1 });
	});

	test("Tasks: t3_dispatch wait: true on a held dispatch is a task that completes after it starts", async () => {
		await idle();
		const busy = await dispatch({ machine: "x" });
		expect(busy.isError).toBe(false);
		const reply = await rawRequest(
			stack.server.mcpUrl,
			"tools/call",
			{
				name: "t3_dispatch",
				arguments: {
					machine: "*",
					project: "demo",
					prompt: "say hello",
					wait: true,
				},
			},
			{ bearer: TOKENS.ops },
		);
		expect(reply.kind).toBe("result");
		const result = (reply as { result: Record<string, unknown> }).result;
		expect(result.resultType).toBe("task");
		const taskId = result.taskId as string;
		const get = async () => {
			const r = await rawRequest(
				stack.server.mcpUrl,
				"tasks/get",
				{ taskId },
				{ bearer: TOKENS.ops },
			);
			return (r as { result: Record<string, unknown> }).result;
		};
		expect((await get()).status).toBe("working");
		stack.sim("x").finishRun(busy.data.thread_id);
		await until(
			async () => (await get()).status === "completed",
			15_000,
			"the task",
		);
		const done = (await get()) as {
			result?: { structuredContent?: { wait?: { outcome: string } } };
		};
		expect(done.result?.structuredContent?.wait?.outcome).toBe("completed");
	});
});

describe("a client losing reach or level by a reload while held", () => {
	let stack: Stack;
	let r1: Client;
	let r2: Client;
	let receiver: Receiver;
	beforeAll(async () => {
		receiver = startReceiver();
		stack = await startStack({
			server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
			machines: [{ name: "x", maxActiveRuns: 1 }],
			clients: [
				testClient("r1", TOKENS.r1, { access: "auto" }),
				testClient("r2", TOKENS.r2, { access: "auto" }),
			],
		});
		r1 = await connectAs(stack, TOKENS.r1);
		r2 = await connectAs(stack, TOKENS.r2);
		await untilMachinesOnline(r1);
	});
	afterAll(async () => {
		await r1?.close();
		await r2?.close();
		await stack?.stop();
		await receiver?.stop();
	});

	test("never started: checked again against the client's current reach and level", async () => {
		const busy = await callTool<Dispatched>(r1, "t3_dispatch", {
			machine: "x",
			project: "demo",
			prompt: "long task",
		});
		const a = await callTool<Dispatched>(r1, "t3_dispatch", {
			machine: "*",
			project: "demo",
			prompt: "say hello",
		});
		const b = await callTool<Dispatched>(r2, "t3_dispatch", {
			machine: "*",
			project: "demo",
			prompt: "say hello",
		});
		expect([a.data.run_status, b.data.run_status]).toEqual(["held", "held"]);
		const services = stack.server.services;
		const next = structuredClone(services.config) as AppConfig;
		for (const c of next.clients) {
			if (c.name === "r1") c.machines = ["elsewhere"];
			if (c.name === "r2") c.access = "read-only";
		}
		await services.reload(next);
		stack.sim("x").finishRun(busy.data.thread_id);
		const waitedA = await callTool<{ outcome: string; run_status: string }>(
			r1,
			"t3_wait",
			{ thread_id: a.data.thread_id, timeout: 30 },
		);
		expect(waitedA.data).toMatchObject({
			outcome: "failed",
			run_status: "never_started",
		});
		const waitedB = await callTool<{
			outcome: string;
			run_status: string;
			error: string;
		}>(r2, "t3_wait", { thread_id: b.data.thread_id, timeout: 30 });
		expect(waitedB.data).toMatchObject({
			outcome: "failed",
			run_status: "never_started",
		});
		expect(waitedB.data.error).toContain("read-only");
		expect(stack.sim("x").threadIds()).not.toContain(a.data.thread_id);
		expect(stack.sim("x").threadIds()).not.toContain(b.data.thread_id);
		// One thread.failed each, run_status never_started, with the reason.
		await until(
			() =>
				receiver.deliveries.filter((d) => d.body.run_status === "never_started")
					.length === 2,
			10_000,
			"the never_started events",
		);
		const failed = receiver.deliveries
			.filter((d) => d.body.thread_id === b.data.thread_id)
			.map((d) => d.body);
		expect(failed).toEqual([
			expect.objectContaining({
				type: "thread.failed",
				run_id: null,
				run_status: "never_started",
				machine: null,
				client: "r2",
				error: expect.stringContaining("read-only"),
			}),
		]);
		// thread.failed never_started's names (CONTRACT.md "Holding").
		expect(
			eventShape(failed[0], ["type", "run_status", "error_class"]),
		).toMatchSnapshot();
	});
});
