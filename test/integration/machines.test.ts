/**
 * Read-only tools end to end: the official MCP client (both eras) → our server → simulated
 * T3 machines over real sockets. Covers machine states, allowlists and reconnects.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freePort } from "../helpers/process.ts";
import {
	callTool,
	demoMachine,
	ERAS,
	launchOnSim,
	type Stack,
	shellSubscriptions,
	startStack,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";

let stack: Stack;
beforeAll(async () => {
	stack = await startStack({
		machines: [
			demoMachine(
				[
					["secret", "/srv/t3/secret"],
					[".dotfiles", "/home/u/.dotfiles"],
				],
				["demo", "/home/*"],
			),
			{ name: "down", url: `http://127.0.0.1:${await freePort()}` },
			{ name: "notoken", token: null },
			{ name: "badtoken", token: "not-the-token" },
			{ name: "old", sim: { protocol: 1 } },
			{ name: "newer", sim: { protocol: 3 } },
		],
	});
});
afterAll(async () => {
	await stack.stop();
});

type Machines = {
	machines: {
		name: string;
		state: string;
		reason: string | null;
		projects: string[];
	}[];
};

describe.each(ERAS)("t3_machines (%s era)", (era) => {
	test("reports each machine's state with a reason", async () => {
		const client = await stack.client({ era });
		await until(
			async () => {
				const { data } = await callTool<Machines>(client, "t3_machines");
				return data.machines.every((m) => m.state !== "connecting");
			},
			10_000,
			"machines to settle",
		);
		const { data } = await callTool<Machines>(client, "t3_machines");
		const byName = Object.fromEntries(data.machines.map((m) => [m.name, m]));
		expect(byName.demo?.state).toBe("online");
		expect(byName.demo?.reason).toBeNull();
		expect(byName.demo?.projects.sort()).toEqual([".dotfiles", "demo"]);
		expect(byName.down?.state).toBe("offline");
		expect(byName.down?.reason).toContain("down");
		expect(byName.notoken).toMatchObject({ state: "unauthorized" });
		expect(byName.notoken?.reason).toContain("T3_NOTOKEN_TOKEN");
		expect(byName.badtoken).toMatchObject({ state: "unauthorized" });
		expect(byName.old?.state).toBe("incompatible");
		expect(byName.old?.reason).toContain(
			"T3 Code 0.1.0 or later (orchestration protocol 2) is required",
		);
		expect(byName.old?.reason).toContain('"old"');
		// A newer server is not the operator's to downgrade: this connector is behind.
		expect(byName.newer?.state).toBe("incompatible");
		expect(byName.newer?.reason).toContain('"newer"');
		expect(byName.newer?.reason).toContain(
			"this t3code-mcp is too old for orchestration protocol 3; update t3code-mcp",
		);
		expect(byName.newer?.reason).not.toContain("T3 Code 0.1.0 or later");
	});
});

describe("t3_projects", () => {
	test("lists only allowlisted projects (title or path patterns)", async () => {
		const client = await stack.client();
		const { data, isError } = await callTool<{
			projects: { title: string; path: string }[];
		}>(client, "t3_projects", {
			machine: "demo",
		});
		expect(isError).toBe(false);
		expect(data.projects.map((p) => p.title).sort()).toEqual([
			".dotfiles",
			"demo",
		]);
	});

	test("unknown machine lists the configured names", async () => {
		const client = await stack.client();
		const result = await callTool(client, "t3_projects", { machine: "nope" });
		expect(result.isError).toBe(true);
		expect(result.text).toBe(
			'Unknown machine "nope". Configured machines: demo, down, notoken, badtoken, old, newer.',
		);
	});

	test("a machine that is not online is an error with its state and reason, not an empty list", async () => {
		const client = await stack.client();
		for (const [machine, state, why] of [
			["down", "offline", "cannot reach"],
			["notoken", "unauthorized", "no token"],
			["old", "incompatible", "protocol"],
		] as const) {
			const result = await callTool(client, "t3_projects", { machine });
			expect(result.isError).toBe(true);
			expect(result.text).toContain(`Machine "${machine}" is ${state}: `);
			expect(result.text).toContain(why);
		}
	});

	test("a missing argument names it", async () => {
		const client = await stack.client();
		const result = await callTool(client, "t3_projects", {});
		expect(result.isError).toBe(true);
		expect(result.text).toContain("machine");
	});
});

describe("hidden projects", () => {
	test("a thread of a project outside the allowlist does not exist for t3_thread", async () => {
		const sim = stack.sim("demo");
		const secret = await launchOnSim(sim, "secret", "hidden work");
		const visible = await launchOnSim(sim, "demo", "visible work");
		const client = await stack.client();
		await until(
			async () =>
				!(await callTool(client, "t3_thread", { thread_id: visible })).isError,
			10_000,
			"visible thread",
		);
		const hidden = await callTool(client, "t3_thread", { thread_id: secret });
		expect(hidden.isError).toBe(true);
		expect(hidden.text).toContain(
			`Thread "${secret}" was not found on any machine.`,
		);
		const unknown = await callTool(client, "t3_thread", {
			thread_id: "thread-that-never-existed",
		});
		expect(unknown.text.replace("thread-that-never-existed", secret)).toBe(
			hidden.text,
		);
	});
});

describe("connect", () => {
	test("the first shell comes over HTTP; the socket subscription starts after it", async () => {
		const own = await startStack();
		try {
			const sim = own.sim();
			const reads = () =>
				sim.stats().requests["GET /api/orchestration/shell"] ?? 0;
			await untilMachinesOnline(await own.client());
			// A fresh process on the same sim, recorded from its first frame.
			sim.record(true);
			const before = reads();
			await own.restartServer();
			await untilMachinesOnline(await own.client());
			const subscriptions = shellSubscriptions(sim);
			sim.record(false);
			expect(reads()).toBe(before + 1);
			// With a cursor, the server sends no full snapshot over the socket, where Bun's
			// WebSocket would keep a buffer that size for the socket's life.
			expect(subscriptions).toHaveLength(1);
			expect(subscriptions[0]).toBeNumber();
			const machine = own.server.services.fleet.get("demo")?.machine;
			expect(machine?.projects().map((p) => p.title)).toEqual(["demo"]);
		} finally {
			await own.stop();
		}
	});
});

describe("reconnect", () => {
	test("after the sim drops every socket the machine comes back online and keeps its threads", async () => {
		const client = await stack.client();
		const sim = stack.sim("demo");
		const created = await callTool<{ thread_id: string }>(
			client,
			"t3_dispatch",
			{
				machine: "demo",
				project: "demo",
				prompt: "before the drop",
			},
		);
		const machine = stack.server.services.fleet.get("demo")?.machine;
		if (!machine) throw new Error("no machine");
		await until(
			() => machine.thread(created.data.thread_id) !== undefined,
			10_000,
			"thread in shell",
		);
		const before = machine.sequence();
		const states: string[] = [];
		const off = machine.onChange((c) => {
			if (c.kind === "state") states.push(c.status.state);
		});
		sim.record(true);
		sim.dropSockets();
		await until(() => states.includes("offline"), 10_000, "offline");
		await until(
			() => machine.status().state === "online",
			15_000,
			"online again",
		);
		off();
		expect(machine.thread(created.data.thread_id)).toBeDefined();
		expect(machine.sequence()).toBeGreaterThanOrEqual(before);
		// The resume asked for the cursor it had, not a fresh snapshot from zero.
		const resume = shellSubscriptions(sim).at(-1);
		sim.record(false);
		expect(resume).toBeGreaterThanOrEqual(before);
		const thread = await callTool(client, "t3_thread", {
			thread_id: created.data.thread_id,
		});
		expect(thread.isError).toBe(false);
		const metrics = await (await fetch(`${stack.server.url}/metrics`)).text();
		expect(metrics).toContain(
			't3code_mcp_machine_reconnects_total{machine="demo"} 1',
		);
	});
});

describe("flow control", () => {
	test("every Chunk the sim sent was acked: no stalled stream after a burst of runs", async () => {
		const client = await stack.client();
		const ids = await Promise.all(
			[1, 2, 3, 4, 5].map(async (n) => {
				const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
					machine: "demo",
					project: "demo",
					prompt: `burst ${n}`,
				});
				return d.data.thread_id;
			}),
		);
		const waited = await Promise.all(
			ids.map((id) =>
				callTool<{ outcome: string }>(client, "t3_wait", {
					thread_id: id,
					timeout: 20,
				}),
			),
		);
		expect(waited.map((w) => w.data.outcome)).toEqual(
			Array(5).fill("completed"),
		);
		await until(
			() => stack.sim("demo").stats().unackedChunks === 0,
			5_000,
			"all chunks acked",
		);
	});
});
