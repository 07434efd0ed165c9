/**
 * One pool, part two (CONTRACT.md "One pool", "Holding", issue 47), over HTTP with the official
 * client against simulated machines: the bar `held` (a and b at max_active_runs 1, c's usage
 * window used up: a third pattern dispatch is held with its final thread_id, listed as held,
 * another is withdrawn, the held one starts on a when a's run ends, after a thread.started
 * event, and a not_before ahead holds one until then), plus order across machines, no
 * head-of-line blocking, withdrawals, not_before's bounds, idempotency and refusals.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { eventShape } from "../helpers/event-shape.ts";
import { offsetClock } from "../helpers/offset-clock.ts";
import { poolBarMachines, untilUsedUp } from "../helpers/pool.ts";
import { type ServerProcess, startServerProcess } from "../helpers/process.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import { busyOn, untilSimsIdle } from "../helpers/sim-busy.ts";
import {
	callTool,
	connectAs,
	connectClient,
	type Stack,
	startStack,
	testClient,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";

const TOKEN = "held-ops-token-0123456789";

interface Held {
	position: number;
	reason: string;
	detail: string;
	since: string;
	not_before: string | null;
}
interface Dispatched {
	thread_id: string;
	machine: string | null;
	project: { id: string | null; title: string; path: string | null };
	run_id: string | null;
	run_status: string;
	delivered_as: string;
	placement: unknown;
	held: Held | null;
}
interface Waited {
	thread_id: string;
	outcome: string;
	run_id: string | null;
	run_status: string | null;
}

describe("the held bar: a and b at max_active_runs 1, c's window used up", () => {
	let stack: Stack;
	let ops: Client;
	let receiver: Receiver;
	const clock = offsetClock();

	const dispatch = (extra: Record<string, unknown> = {}) =>
		callTool<Dispatched>(ops, "t3_dispatch", {
			machine: "*",
			project: "demo",
			prompt: "long task",
			...extra,
		});

	beforeAll(async () => {
		receiver = startReceiver();
		stack = await startStack({
			clock,
			server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
			machines: poolBarMachines(),
			clients: [testClient("ops", TOKEN, { access: "full-access" })],
		});
		ops = await connectAs(stack, TOKEN);
		await untilMachinesOnline(ops);
		await untilUsedUp(ops, "c");
	});
	afterAll(async () => {
		await ops?.close();
		await stack?.stop();
		await receiver?.stop();
		clock.stop();
	});

	test("a third pattern dispatch is held, listed as held; another is withdrawn; the held one starts on a after a's run ends", async () => {
		const first = await dispatch();
		const second = await dispatch();
		expect([first.data.machine, second.data.machine]).toEqual(["a", "b"]);
		const third = await dispatch({
			prompt: "say hello",
			title: "held one",
		});
		expect(third.isError).toBe(false);
		expect(third.data).toMatchObject({
			machine: null,
			project: { id: null, title: "demo", path: null },
			run_id: null,
			run_status: "held",
			delivered_as: "held",
			placement: null,
			held: { position: 1, reason: "machine_cap", not_before: null },
		});
		expect(third.data.thread_id).toBeString();
		expect(third.data.held?.detail).toContain("c: usage_limit");
		const fourth = await dispatch({ prompt: "say hello" });
		expect(fourth.data.held?.position).toBe(2);

		const listed = await callTool<{
			threads: { thread_id: string; state: string; held: Held | null }[];
		}>(ops, "t3_threads", { state: "held" });
		expect(listed.data.threads.map((t) => t.thread_id)).toEqual([
			fourth.data.thread_id,
			third.data.thread_id,
		]);
		expect(listed.data.threads.every((t) => t.state === "held")).toBe(true);
		// A machine filter never matches a dispatch held for a pattern.
		const onA = await callTool<{ threads: unknown[] }>(ops, "t3_threads", {
			state: "held",
			machine: "a",
		});
		expect(onA.data.threads).toEqual([]);
		const read = await callTool<{ status: string; held: Held | null }>(
			ops,
			"t3_thread",
			{ thread_id: third.data.thread_id },
		);
		expect(read.data).toMatchObject({ status: "held", held: { position: 1 } });
		const usage = await callTool<{
			held: { total: number; oldest_since: string | null };
		}>(ops, "t3_usage", {});
		expect(usage.data.held.total).toBe(2);
		expect(usage.data.held.oldest_since).toBe(third.data.held?.since ?? "");
		// Continuing a held thread is refused: it has not started.
		const cont = await callTool(ops, "t3_dispatch", {
			thread_id: third.data.thread_id,
			prompt: "more",
		});
		expect(cont.isError).toBe(true);
		expect(cont.text).toContain("not started yet");

		// Withdraw the fourth: interrupted, and its wait says so.
		const withdrawn = await callTool<{
			interrupted: boolean;
			run_id: string | null;
		}>(ops, "t3_interrupt", { thread_id: fourth.data.thread_id });
		expect(withdrawn.data).toMatchObject({ interrupted: true, run_id: null });
		const waitedOut = await callTool<Waited>(ops, "t3_wait", {
			thread_id: fourth.data.thread_id,
		});
		expect(waitedOut.data).toMatchObject({
			outcome: "interrupted",
			run_status: "withdrawn",
		});
		const nothing = await callTool<Waited>(ops, "t3_wait", {
			thread_id: third.data.thread_id,
			timeout: 0,
		});
		expect(nothing.data).toMatchObject({
			outcome: "timeout",
			run_status: "held",
		});

		// a's run ends: the held one runs on a and completes.
		const waiting = callTool<Waited>(ops, "t3_wait", {
			thread_id: third.data.thread_id,
			timeout: 60,
		});
		stack.sim("a").finishRun(first.data.thread_id);
		const waited = await waiting;
		expect(waited.data.outcome).toBe("completed");
		expect(stack.sim("a").threadIds()).toContain(third.data.thread_id);
		expect(stack.sim("b").threadIds()).not.toContain(third.data.thread_id);
		expect(stack.sim("c").threadIds()).not.toContain(third.data.thread_id);
		await until(
			() =>
				receiver.deliveries.some(
					(d) =>
						d.body.thread_id === third.data.thread_id &&
						d.body.type === "thread.completed",
				),
			10_000,
			"the held one's completion",
		);
		const mine = receiver.deliveries
			.filter((d) => d.body.thread_id === third.data.thread_id)
			.map((d) => d.body);
		expect(mine.map((b) => b.type)).toEqual([
			"thread.started",
			"thread.completed",
		]);
		expect(mine[0]).toMatchObject({
			machine: "a",
			title: "held one",
			client: "ops",
			placement: { machine: "a" },
		});
		// thread.started's names, as CONTRACT.md "Holding" lists them.
		expect(eventShape(mine[0], ["type", "reason"])).toMatchSnapshot();
		expect(
			receiver.deliveries.some(
				(d) => d.body.thread_id === fourth.data.thread_id,
			),
		).toBe(false);
		stack.sim("b").finishRun(second.data.thread_id);
	});

	test("a not_before 15 s ahead holds a dispatch until then", async () => {
		await untilSimsIdle(stack, ["a", "b"]);
		const at = new Date(clock.now() + 15_000).toISOString();
		const later = await dispatch({ prompt: "say hello", not_before: at });
		expect(later.data).toMatchObject({
			run_status: "held",
			held: { reason: "not_before", not_before: at },
		});
		clock.advance(14_000);
		const still = await callTool<{ held: Held | null }>(ops, "t3_thread", {
			thread_id: later.data.thread_id,
		});
		expect(still.data.held?.reason).toBe("not_before");
		expect(busyOn(stack.sim("a"))).toEqual([]);
		clock.advance(1_000);
		const waited = await callTool<Waited>(ops, "t3_wait", {
			thread_id: later.data.thread_id,
			timeout: 30,
		});
		expect(waited.data.outcome).toBe("completed");
	});
});

describe("the held bar, across a SIGKILL of the connector", () => {
	let dir: string;
	const sims: Sim[] = [];
	beforeAll(async () => {
		dir = mkdtempSync(join(tmpdir(), "t3code-mcp-held-kill-"));
		for (let i = 0; i < 2; i++)
			sims.push(await startSim({ stepMs: 5, coalesceMs: 5 }));
	});
	afterAll(async () => {
		for (const sim of sims) await sim.stop();
		rmSync(dir, { recursive: true, force: true });
	});

	test("a dispatch held while the connector is killed starts after the restart, only after a machine frees, on exactly one machine", async () => {
		const [a, b] = sims as [Sim, Sim];
		const options = {
			dir,
			machines: [],
			statePath: join(dir, "state.sqlite"),
			env: { T3_A_TOKEN: a.token, T3_B_TOKEN: b.token },
			moreToml: ["a", "b"]
				.map(
					(name, i) =>
						`[machines.${name}]\nurl = "${sims[i]?.url}"\ntoken_env = "T3_${name.toUpperCase()}_TOKEN"\nprojects = ["*"]\nmodel = "claudeAgent/claude-opus-5"\nmax_active_runs = 1\n`,
				)
				.join("\n"),
		};
		let server: ServerProcess = await startServerProcess(options);
		let client = await connectClient(server.mcpUrl);
		try {
			await untilMachinesOnline(client);
			const run = (extra: Record<string, unknown>) =>
				callTool<Dispatched>(client, "t3_dispatch", {
					project: "demo",
					prompt: "long task",
					...extra,
				});
			const onA = await run({ machine: "a" });
			const onB = await run({ machine: "b" });
			expect([onA.isError, onB.isError]).toEqual([false, false]);
			const held = await run({ machine: "*", prompt: "say hello" });
			expect(held.data.run_status).toBe("held");
			const id = held.data.thread_id;
			await server.kill("SIGKILL");
			await client.close().catch(() => {});
			server = await startServerProcess(options);
			client = await connectClient(server.mcpUrl);
			await untilMachinesOnline(client);
			const listed = await callTool<{ threads: { thread_id: string }[] }>(
				client,
				"t3_threads",
				{ state: "held" },
			);
			expect(listed.data.threads.map((t) => t.thread_id)).toEqual([id]);
			expect([...a.threadIds(), ...b.threadIds()]).not.toContain(id);
			b.finishRun(onB.data.thread_id);
			const waited = await callTool<Waited>(client, "t3_wait", {
				thread_id: id,
				timeout: 30,
			});
			expect(waited.data.outcome).toBe("completed");
			expect(
				[a, b].map((s) => s.threadIds().filter((t) => t === id).length),
			).toEqual([0, 1]);
			a.finishRun(onA.data.thread_id);
		} finally {
			await client.close().catch(() => {});
			await server.kill("SIGKILL");
		}
	});
});
