/**
 * Held dispatches (CONTRACT.md "One pool", "Holding"): they start oldest first among those a
 * machine with room can take, none waiting behind one that needs another machine; a withdraw
 * before the start, and one racing the start (a fault point holds the launch between its record
 * and its send); not_before in the past and more than 7 days ahead; the idempotency key while
 * held, withdrawn and started; max_held per client and per server; attachments never held.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { consoleCookie } from "../helpers/console.ts";
import { untilIdle } from "../helpers/pool.ts";
import { untilSimsIdle } from "../helpers/sim-busy.ts";
import {
	callTool,
	connectAs,
	type Stack,
	startStack,
	testClient,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";

const TOKENS = {
	ops: "order-ops-token-0123456789",
	small: "order-small-token-0123456789",
};

interface Dispatched {
	thread_id: string;
	machine: string | null;
	run_id: string | null;
	run_status: string;
	held: { position: number; reason: string } | null;
}

describe("order across machines, no head-of-line blocking, withdrawals", () => {
	let stack: Stack;
	let ops: Client;
	let small: Client;
	/** Launches held at their record until released (a withdraw racing the start). */
	const gates = new Map<string, Promise<void>>();
	const recorded = new Set<string>();

	const dispatch = (who: Client, extra: Record<string, unknown>) =>
		callTool<Dispatched>(who, "t3_dispatch", {
			project: "demo",
			prompt: "long task",
			...extra,
		});
	/** Until the connector shows x and y without a busy thread. */
	const idle = () => untilIdle(ops, "x and y idle");
	/** Once x and y are idle, a long task on each (both at their cap); those dispatches. */
	const fillBoth = async () => {
		await idle();
		const onX = await dispatch(ops, { machine: "x" });
		const onY = await dispatch(ops, { machine: "y" });
		return [onX, onY] as const;
	};
	/** Where each thread runs now, by simulator. */
	const runsOn = (id: string) =>
		["x", "y"].filter((m) => stack.sim(m).threadIds().includes(id));

	beforeAll(async () => {
		stack = await startStack({
			machines: [
				{ name: "x", maxActiveRuns: 1 },
				{ name: "y", maxActiveRuns: 1 },
			],
			clients: [
				testClient("ops", TOKENS.ops, { access: "full-access" }),
				testClient("small", TOKENS.small, { access: "auto", maxHeld: 1 }),
			],
			server: { maxHeld: 5 },
			heldFaults: {
				async afterRecord(id) {
					recorded.add(id);
					await gates.get(id);
				},
			},
		});
		ops = await connectAs(stack, TOKENS.ops);
		small = await connectAs(stack, TOKENS.small);
		await untilMachinesOnline(ops);
	});
	afterAll(async () => {
		await ops?.close();
		await small?.close();
		await stack?.stop();
	});

	test("oldest first among those a machine with room can take; one waiting for x never holds up y", async () => {
		const onX = await dispatch(ops, { machine: "x" });
		const onY = await dispatch(ops, { machine: "y" });
		expect([onX.data.machine, onY.data.machine]).toEqual(["x", "y"]);
		const d1 = await dispatch(ops, { machine: "x", when_busy: "hold" });
		const d2 = await dispatch(ops, { machine: "*" });
		const d3 = await dispatch(ops, { machine: "y", when_busy: "hold" });
		const d4 = await dispatch(ops, { machine: "*" });
		expect(
			[d1, d2, d3, d4].map((d) => [d.data.run_status, d.data.machine]),
		).toEqual([
			["held", "x"],
			["held", null],
			["held", "y"],
			["held", null],
		]);
		// Positions: d1 and d2 both could take x; d3 and d4 count those before them that share y.
		expect([d1, d2, d3, d4].map((d) => d.data.held?.position)).toEqual([
			1, 2, 2, 4,
		]);
		// A machine filter matches one held for that machine by name only.
		const forX = await callTool<{ threads: { thread_id: string }[] }>(
			ops,
			"t3_threads",
			{ state: "held", machine: "x" },
		);
		expect(forX.data.threads.map((t) => t.thread_id)).toEqual([
			d1.data.thread_id,
		]);
		const machines = await callTool<{
			machines: { name: string; held: number }[];
		}>(ops, "t3_machines", {});
		expect(machines.data.machines.map((m) => [m.name, m.held])).toEqual([
			["x", 1],
			["y", 1],
		]);

		// y frees: d2 (the oldest that can take y) starts there; d1 waits for x alone.
		stack.sim("y").finishRun(onY.data.thread_id);
		await until(() => runsOn(d2.data.thread_id).length > 0, 10_000, "d2");
		expect(runsOn(d2.data.thread_id)).toEqual(["y"]);
		expect(runsOn(d1.data.thread_id)).toEqual([]);
		// x frees: d1 (older than d4) starts on x.
		stack.sim("x").finishRun(onX.data.thread_id);
		await until(() => runsOn(d1.data.thread_id).length > 0, 10_000, "d1");
		expect(runsOn(d1.data.thread_id)).toEqual(["x"]);
		// y frees again: d3 (older than d4); then x: d4.
		stack.sim("y").finishRun(d2.data.thread_id);
		await until(() => runsOn(d3.data.thread_id).length > 0, 10_000, "d3");
		expect(runsOn(d3.data.thread_id)).toEqual(["y"]);
		stack.sim("x").finishRun(d1.data.thread_id);
		await until(() => runsOn(d4.data.thread_id).length > 0, 10_000, "d4");
		expect(runsOn(d4.data.thread_id)).toEqual(["x"]);
		for (const id of [d3.data.thread_id, d4.data.thread_id])
			for (const m of runsOn(id)) stack.sim(m).finishRun(id);
		await untilSimsIdle(stack, ["x", "y"]);
	});

	test("a withdraw racing the start interrupts the run that started", async () => {
		const [onX, onY] = await fillBoth();
		const held = await dispatch(ops, { machine: "*" });
		const id = held.data.thread_id;
		let release = () => {};
		gates.set(
			id,
			new Promise<void>((resolve) => {
				release = resolve;
			}),
		);
		stack.sim("x").finishRun(onX.data.thread_id);
		// Its launch is recorded (machine, commandId) and held before the send.
		await until(() => recorded.has(id), 10_000, "the record");
		const interrupting = callTool<{
			interrupted: boolean;
			run_id: string | null;
		}>(ops, "t3_interrupt", { thread_id: id });
		await Bun.sleep(0);
		release();
		const interrupted = await interrupting;
		expect(interrupted.isError).toBe(false);
		expect(interrupted.data.interrupted).toBe(true);
		expect(interrupted.data.run_id).toBeString();
		const waited = await callTool<{ outcome: string }>(ops, "t3_wait", {
			thread_id: id,
			timeout: 30,
		});
		expect(waited.data.outcome).toBe("interrupted");
		expect(stack.sim("x").threadIds()).toContain(id);
		stack.sim("y").finishRun(onY.data.thread_id);
	});

	test("not_before in the past is now; more than 7 days ahead is refused", async () => {
		await untilSimsIdle(stack, ["x", "y"]);
		const past = await dispatch(ops, {
			machine: "*",
			prompt: "say hello",
			not_before: new Date(Date.now() - 3_600_000).toISOString(),
		});
		expect(past.data.run_status).not.toBe("held");
		expect(past.data.run_id).toBeString();
		const far = await dispatch(ops, {
			machine: "*",
			not_before: new Date(Date.now() + 8 * 24 * 3_600_000).toISOString(),
		});
		expect(far.isError).toBe(true);
		expect(far.text).toContain("more than 7 days ahead");
		const bad = await dispatch(ops, { machine: "*", not_before: "soon" });
		expect(bad.text).toContain("not an ISO time");
		const cont = await dispatch(ops, {
			thread_id: past.data.thread_id,
			not_before: new Date().toISOString(),
		});
		expect(cont.text).toContain("never held");
		await callTool(ops, "t3_wait", { thread_id: past.data.thread_id });
	});

	test("the idempotency key returns the held, then withdrawn, result; another the started one", async () => {
		const [onX, onY] = await fillBoth();
		const args = { machine: "*", idempotency_key: "held-key-1" };
		const first = await dispatch(ops, args);
		const again = await dispatch(ops, args);
		expect(again.data.thread_id).toBe(first.data.thread_id);
		expect(again.data.run_status).toBe("held");
		const other = await dispatch(ops, { ...args, prompt: "something else" });
		expect(other.isError).toBe(true);
		await callTool(ops, "t3_interrupt", { thread_id: first.data.thread_id });
		const withdrawn = await dispatch(ops, args);
		expect(withdrawn.data).toMatchObject({
			thread_id: first.data.thread_id,
			run_status: "withdrawn",
			held: null,
		});
		const keyed = { machine: "*", idempotency_key: "held-key-2" };
		const later = await dispatch(ops, keyed);
		expect(later.data.run_status).toBe("held");
		stack.sim("x").finishRun(onX.data.thread_id);
		await until(
			() => stack.sim("x").threadIds().includes(later.data.thread_id),
			10_000,
			"the keyed one started",
		);
		await until(
			async () => (await dispatch(ops, keyed)).data.run_id !== null,
			10_000,
			"its run",
		);
		const started = await dispatch(ops, keyed);
		expect(started.data).toMatchObject({
			thread_id: later.data.thread_id,
			machine: "x",
			held: null,
		});
		expect(
			stack
				.sim("x")
				.threadIds()
				.filter((t) => t === later.data.thread_id).length,
		).toBe(1);
		stack.sim("x").finishRun(later.data.thread_id);
		stack.sim("y").finishRun(onY.data.thread_id);
	});

	test("max_held per client and per server; attachments never held; continuing a held one refused", async () => {
		const [onX, onY] = await fillBoth();
		expect([onX.isError, onY.isError]).toEqual([false, false]);
		const one = await dispatch(small, { machine: "*" });
		expect(one.data.run_status).toBe("held");
		const two = await dispatch(small, { machine: "*" });
		expect(two.isError).toBe(true);
		expect(two.text).toStartWith("max_held_reached:");
		expect(two.text).toContain("max_held");
		// The server's max_held (5) counts every client's.
		const more = [];
		for (let i = 0; i < 5; i++)
			more.push(await dispatch(ops, { machine: "*" }));
		expect(more.slice(0, 4).every((d) => d.data.run_status === "held")).toBe(
			true,
		);
		expect(more[4]?.text).toStartWith("max_held_reached:");
		expect(more[4]?.text).toContain("[server] max_held");
		const metrics = await (
			await fetch(`${stack.server.url}/metrics`, {
				headers: { authorization: `Bearer ${TOKENS.ops}` },
			})
		).text();
		expect(metrics).toContain("t3code_mcp_held_dispatches 5");
		// Another client's held dispatch does not exist for small.
		const foreign = await callTool(small, "t3_thread", {
			thread_id: more[0]?.data.thread_id,
		});
		expect(foreign.isError).toBe(true);
		const usage = await callTool<{
			held: { total: number };
			clients: { name: string; held: number }[];
		}>(small, "t3_usage", {});
		expect(usage.data.held.total).toBe(1);
		expect(usage.data.clients).toEqual([
			expect.objectContaining({ name: "small", held: 1 }),
		]);
		await callTool(small, "t3_interrupt", { thread_id: one.data.thread_id });
		for (const d of more.slice(0, 4))
			await callTool(ops, "t3_delete", { thread_id: d.data.thread_id });
		const gone = await callTool(ops, "t3_thread", {
			thread_id: more[0]?.data.thread_id,
		});
		expect(gone.isError).toBe(true);
		const attached = await dispatch(ops, {
			machine: "*",
			attachments: [
				{ name: "a.txt", mime_type: "text/plain", data: btoa("hello") },
			],
		});
		expect(attached.isError).toBe(true);
		expect(attached.text).toContain("never held");
		stack.sim("x").finishRun(onX.data.thread_id);
		stack.sim("y").finishRun(onY.data.thread_id);
	});

	test("the console lists held dispatches with reason and position, and withdraws one", async () => {
		const [onX, onY] = await fillBoth();
		const held = await dispatch(ops, { machine: "*", title: "wait for room" });
		expect(held.data.run_status).toBe("held");
		const base = new URL(stack.server.mcpUrl).origin;
		const form = (body: string, cookie = "") => ({
			method: "POST",
			headers: {
				"content-type": "application/x-www-form-urlencoded",
				...(cookie ? { cookie } : {}),
			},
			body,
			redirect: "manual" as const,
		});
		const cookie = await consoleCookie(base, TOKENS.ops);
		const page = await (
			await fetch(`${base}/console`, { headers: { cookie } })
		).text();
		expect(page).toContain('data-section="held"');
		expect(page).toContain("wait for room");
		expect(page).toContain("#1 ");
		expect(page).toContain("machine_cap");
		const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
		const withdrawn = await fetch(
			`${base}/console/held/${held.data.thread_id}/withdraw`,
			form(`csrf=${encodeURIComponent(csrf)}`, cookie),
		);
		expect(withdrawn.status).toBe(303);
		const waited = await callTool<{ outcome: string; run_status: string }>(
			ops,
			"t3_wait",
			{ thread_id: held.data.thread_id },
		);
		expect(waited.data).toMatchObject({
			outcome: "interrupted",
			run_status: "withdrawn",
		});
		stack.sim("x").finishRun(onX.data.thread_id);
		stack.sim("y").finishRun(onY.data.thread_id);
	});

	test("t3_wait on a held dispatch and a running thread answers for whichever settles first", async () => {
		const [onX, onY] = await fillBoth();
		const held = await dispatch(ops, { machine: "*", prompt: "say hello" });
		expect(held.data.run_status).toBe("held");
		const waiting = callTool<{ thread_id: string; outcome: string }>(
			ops,
			"t3_wait",
			{ thread_ids: [held.data.thread_id, onY.data.thread_id], timeout: 30 },
		);
		stack.sim("y").finishRun(onY.data.thread_id);
		const first = await waiting;
		expect(first.data).toMatchObject({
			thread_id: onY.data.thread_id,
			outcome: "completed",
		});
		// y's room went to the held one; a wait on both now follows it to its end.
		const second = await callTool<{ thread_id: string; outcome: string }>(
			ops,
			"t3_wait",
			{ thread_ids: [held.data.thread_id], timeout: 30 },
		);
		expect(second.data).toMatchObject({
			thread_id: held.data.thread_id,
			outcome: "completed",
		});
		stack.sim("x").finishRun(onX.data.thread_id);
	});
});
