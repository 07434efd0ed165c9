/**
 * One pool, part one (CONTRACT.md "One pool", issue 46), over HTTP with the official client
 * against three simulated machines over real sockets: placement by pattern (the bar: a and b at
 * max_active_runs 1, c with its provider's session window at 100 %), refusals, reach, usage
 * from T3 and its updates over the config stream, bursts of pattern dispatches that never
 * overshoot a machine's cap, and the pre-release engine that reports no usage.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import type { Sim } from "../../src/sim/index.ts";
import { poolBarMachines, untilIdle, untilUsedUp } from "../helpers/pool.ts";
import { busyOn } from "../helpers/sim-busy.ts";
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
	ops: "pool-ops-token-0123456789",
	ab: "pool-ab-token-01234567890",
};

interface Placement {
	machine: string;
	reason: string;
	skipped: { machine: string; reason: string; detail: string }[];
}
interface Dispatched {
	thread_id: string;
	machine: string;
	placement: Placement | null;
}
interface UsageRow {
	provider: string;
	ready: boolean;
	windows: { kind: string; used_percent: number | null }[];
}
interface Usage {
	machines: {
		name: string;
		state: string;
		active_runs: number;
		max_active_runs: number | null;
		held: number;
		usage: UsageRow[];
	}[];
	held: { total: number; oldest_since: string | null };
	clients: { name: string; active_runs: number }[];
}

/** c's claudeAgent session window as t3_usage shows it. */
const sessionOf = (usage: Usage, machine: string) =>
	usage.machines
		.find((m) => m.name === machine)
		?.usage.find((u) => u.provider === "claudeAgent")
		?.windows.find((w) => w.kind === "session")?.used_percent;

describe("the placement bar: a and b at max_active_runs 1, c at 100 %", () => {
	let stack: Stack;
	let ops: Client;
	let ab: Client;
	const sims = (): Sim[] => ["a", "b", "c"].map((n) => stack.sim(n));

	const dispatch = (who: Client, extra: Record<string, unknown> = {}) =>
		callTool<Dispatched>(who, "t3_dispatch", {
			machine: "*",
			project: "demo",
			prompt: "long task",
			...extra,
		});
	const usage = async (who: Client = ops) =>
		(await callTool<Usage>(who, "t3_usage", {})).data;

	/** Ends every run on every sim, and waits until the connector shows no machine busy. */
	async function finishAll() {
		for (const sim of sims()) for (const id of busyOn(sim)) sim.finishRun(id);
		await untilIdle(ops);
	}

	beforeAll(async () => {
		stack = await startStack({
			machines: poolBarMachines([
				{ provider: "claudeAgent", kind: "weekly", usedPercent: 30 },
			]),
			clients: [
				testClient("ops", TOKENS.ops, { access: "full-access" }),
				testClient("ab", TOKENS.ab, {
					access: "auto",
					machines: ["a", "b"],
					approve: false,
				}),
			],
		});
		ops = await connectAs(stack, TOKENS.ops);
		ab = await connectAs(stack, TOKENS.ab);
		await untilMachinesOnline(ops);
		await untilUsedUp(ops, "c");
	});
	afterAll(async () => {
		await ops?.close();
		await ab?.close();
		await stack?.stop();
	});

	test("first on a (c skipped for usage_limit), second on b, a third refused no_capacity", async () => {
		const first = await dispatch(ops);
		expect(first.isError).toBe(false);
		expect(first.data.machine).toBe("a");
		expect(first.data.placement).toEqual({
			machine: "a",
			reason: "config_order",
			skipped: [
				{
					machine: "c",
					reason: "usage_limit",
					detail: expect.stringContaining("Session window is at 100 %"),
				},
			],
		});
		const second = await dispatch(ops);
		expect(second.data.machine).toBe("b");
		expect(
			second.data.placement?.skipped.map((s) => [s.machine, s.reason]),
		).toEqual([
			["a", "machine_cap"],
			["c", "usage_limit"],
		]);
		const third = await dispatch(ops, { when_busy: "refuse" });
		expect(third.isError).toBe(true);
		expect(third.text).toStartWith("no_capacity:");
		expect(third.text).toContain("a (machine_cap:");
		expect(third.text).toContain("b (machine_cap:");
		expect(third.text).toContain("c (usage_limit:");
		// A named machine at its cap: max_active_runs_reached, nothing sent.
		const named = await dispatch(ops, { machine: "a" });
		expect(named.text).toStartWith("max_active_runs_reached:");
		expect(named.text).toContain('machine "a"');
		expect(busyOn(stack.sim("a")).length).toBe(1);
		const metrics = await (
			await fetch(`${stack.server.url}/metrics`, {
				headers: { authorization: `Bearer ${TOKENS.ops}` },
			})
		).text();
		expect(metrics).toContain('t3code_mcp_placements_total{machine="a"} 1');
		expect(metrics).toContain('t3code_mcp_placements_total{machine="b"} 1');
	});

	test("t3_usage shows c's window at 100; t3_machines a's active_runs 1 of 1", async () => {
		const u = await usage();
		expect(sessionOf(u, "c")).toBe(100);
		expect(
			u.machines.map((m) => [m.name, m.active_runs, m.max_active_runs]),
		).toEqual([
			["a", 1, 1],
			["b", 1, 1],
			["c", 0, null],
		]);
		expect(u.held).toEqual({ total: 0, oldest_since: null });
		expect(u.clients.map((c) => c.name).sort()).toEqual(["ab", "ops"]);
		// A sim without --usage reports none.
		expect(u.machines.find((m) => m.name === "a")?.usage).toEqual([]);
		const machines = await callTool<{
			machines: {
				name: string;
				active_runs: number;
				max_active_runs: number | null;
				held: number;
			}[];
		}>(ops, "t3_machines", {});
		expect(machines.data.machines.find((m) => m.name === "a")).toMatchObject({
			active_runs: 1,
			max_active_runs: 1,
			held: 0,
		});
	});

	test("a client reaching a and b never sees c", async () => {
		// Refused (not held: "One pool, part two" holds a pattern's dispatch by default).
		const refused = await dispatch(ab, { when_busy: "refuse" });
		expect(refused.text).toStartWith("no_capacity:");
		expect(refused.text).not.toContain("c (");
		const own = await usage(ab);
		expect(own.machines.map((m) => m.name)).toEqual(["a", "b"]);
		expect(own.clients.map((c) => c.name)).toEqual(["ab"]);
		await finishAll();
		const placed = await dispatch(ab);
		expect(placed.data.placement).toEqual({
			machine: "a",
			reason: "config_order",
			skipped: [],
		});
		const second = await dispatch(ab);
		expect(second.data.placement?.skipped.map((s) => s.machine)).toEqual(["a"]);
		const none = await dispatch(ab, { machine: "c*" });
		expect(none.text).toContain("the machines you reach: a, b");
		await finishAll();
	});

	test("a burst of pattern dispatches never overshoots a machine's cap", async () => {
		let peak = 0;
		let sampling = true;
		const sampler = (async () => {
			while (sampling) {
				for (const sim of [stack.sim("a"), stack.sim("b")])
					peak = Math.max(peak, busyOn(sim).length);
				await new Promise((r) => setImmediate(r));
			}
		})();
		const results = await Promise.all(
			Array.from({ length: 12 }, () => dispatch(ops, { when_busy: "refuse" })),
		);
		sampling = false;
		await sampler;
		const placed = results.filter((r) => !r.isError);
		expect(placed.map((r) => r.data.machine).sort()).toEqual(["a", "b"]);
		for (const r of results.filter((r) => r.isError))
			expect(r.text).toStartWith("no_capacity:");
		expect(peak).toBeLessThanOrEqual(1);
		expect(busyOn(stack.sim("c")).length).toBe(0);
		const busyRows = async () =>
			(
				await callTool<{ machines: { name: string; active_runs: number }[] }>(
					ops,
					"t3_machines",
					{},
				)
			).data.machines.map((m) => [m.name, m.active_runs]);
		expect(await busyRows()).toEqual([
			["a", 1],
			["b", 1],
			["c", 0],
		]);
		await finishAll();
		// t3_machines keeps its answer only while nothing in it changed.
		expect(await busyRows()).toEqual([
			["a", 0],
			["b", 0],
			["c", 0],
		]);
	});

	test("usage updates over the config stream: c's window back to 20 % gives it room", async () => {
		stack
			.sim("c")
			.setUsage("claudeAgent", [{ kind: "session", usedPercent: 20 }]);
		await until(
			async () => sessionOf(await usage(), "c") === 20,
			10_000,
			"c's new usage",
		);
		// a and b busy: c is the one with room now.
		await dispatch(ops);
		await dispatch(ops);
		const third = await dispatch(ops);
		expect(third.data.placement).toEqual({
			machine: "c",
			reason: "only_room",
			skipped: [
				{ machine: "a", reason: "machine_cap", detail: expect.any(String) },
				{ machine: "b", reason: "machine_cap", detail: expect.any(String) },
			],
		});
		// A run on c that hits the usage limit: T3 puts the session window at 100 % again, and
		// the failed run's reset keeps c without room.
		await finishAll();
		const limited = await dispatch(ops, {
			machine: "c",
			prompt: "hit the usage limit",
		});
		expect(limited.isError).toBe(false);
		await until(
			async () => sessionOf(await usage(), "c") === 100,
			10_000,
			"c at its limit",
		);
		await dispatch(ops);
		await dispatch(ops);
		const refused = await dispatch(ops, { when_busy: "refuse" });
		expect(refused.text).toContain("c (usage_limit:");
		await finishAll();
	});

	test("a burst to a named machine at max_active_runs 1 starts exactly one", async () => {
		const results = await Promise.all(
			Array.from({ length: 8 }, () => dispatch(ops, { machine: "b" })),
		);
		expect(results.filter((r) => !r.isError).length).toBe(1);
		for (const r of results.filter((r) => r.isError))
			expect(r.text).toStartWith("max_active_runs_reached:");
		expect(busyOn(stack.sim("b")).length).toBe(1);
		await finishAll();
	});
});

describe("a machine that is not online has no room", () => {
	let stack: Stack;
	let client: Client;
	beforeAll(async () => {
		stack = await startStack({
			machines: [{ name: "x", maxActiveRuns: 1 }, { name: "y" }],
		});
		client = await stack.client();
		await untilMachinesOnline(client);
	});
	afterAll(async () => {
		await client?.close();
		await stack?.stop();
	});

	test("skipped as offline by a pattern; refused by name with nothing sent", async () => {
		await stack.sim("x").stop();
		await until(
			async () =>
				(await callTool<Usage>(client, "t3_usage", { machine: "x" })).data
					.machines[0]?.state !== "online",
			10_000,
			"x offline",
		);
		const placed = await callTool<Dispatched>(client, "t3_dispatch", {
			machine: "*",
			project: "demo",
			prompt: "say hello",
		});
		expect(placed.data.placement).toEqual({
			machine: "y",
			reason: "only_room",
			skipped: [
				{ machine: "x", reason: "offline", detail: expect.any(String) },
			],
		});
		const named = await callTool(client, "t3_dispatch", {
			machine: "x",
			project: "demo",
			prompt: "say hello",
		});
		expect(named.isError).toBe(true);
		expect(named.text).toContain(
			"no room (max_active_runs) until its shell has synchronized",
		);
	});
});

describe("the pre-release engine reports no usage", () => {
	let stack: Stack;
	let client: Client;
	beforeAll(async () => {
		stack = await startStack({
			machines: [
				{
					name: "pre",
					sim: {
						compat: "prerelease",
						usage: [
							{ provider: "claudeAgent", kind: "session", usedPercent: 100 },
						],
					},
				},
			],
		});
		client = await stack.client();
		await untilMachinesOnline(client);
	});
	afterAll(async () => {
		await client?.close();
		await stack?.stop();
	});

	test("usage [] and placement ignores usage", async () => {
		const u = await callTool<Usage>(client, "t3_usage", {});
		expect(u.data.machines).toEqual([
			{
				name: "pre",
				state: "online",
				active_runs: 0,
				max_active_runs: null,
				held: 0,
				usage: [],
			},
		]);
		const placed = await callTool<Dispatched>(client, "t3_dispatch", {
			machine: "p*",
			project: "demo",
			prompt: "say hello",
		});
		expect(placed.isError).toBe(false);
		expect(placed.data.placement).toEqual({
			machine: "pre",
			reason: "only_room",
			skipped: [],
		});
	});

	test("a retry of a keyed pattern dispatch answers with the thread it placed", async () => {
		const args = {
			machine: "*",
			project: "demo",
			prompt: "say hello",
			idempotency_key: "pool-key-1",
		};
		const first = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect(first.data.placement?.machine).toBe("pre");
		const again = await callTool<Dispatched>(client, "t3_dispatch", args);
		expect(again.isError).toBe(false);
		expect(again.data.thread_id).toBe(first.data.thread_id);
		const other = await callTool<Dispatched>(client, "t3_dispatch", {
			...args,
			prompt: "something else",
		});
		expect(other.isError).toBe(true);
	});
});

describe("the pre-release engine holds and starts a dispatch", () => {
	let stack: Stack;
	let client: Client;
	beforeAll(async () => {
		stack = await startStack({
			machines: [
				{ name: "pre", maxActiveRuns: 1, sim: { compat: "prerelease" } },
			],
		});
		client = await stack.client();
		await untilMachinesOnline(client);
	});
	afterAll(async () => {
		await client?.close();
		await stack?.stop();
	});

	test("held while the machine is at its cap, started with its own thread id when the run ends", async () => {
		const first = await callTool<Dispatched>(client, "t3_dispatch", {
			machine: "pre",
			project: "demo",
			prompt: "long task",
		});
		expect(first.isError).toBe(false);
		const held = await callTool<Dispatched & { run_status: string }>(
			client,
			"t3_dispatch",
			{ machine: "p*", project: "demo", prompt: "say hello" },
		);
		expect(held.data.run_status).toBe("held");
		stack.sim("pre").finishRun(first.data.thread_id);
		const waited = await callTool<{ outcome: string }>(client, "t3_wait", {
			thread_id: held.data.thread_id,
			timeout: 30,
		});
		expect(waited.data.outcome).toBe("completed");
		expect(stack.sim("pre").threadIds()).toContain(held.data.thread_id);
	});
});
