/**
 * A config reload (what SIGHUP applies, CONTRACT.md "Operators") on a running server: clients at
 * the next request, machines added, removed and reconnected while the others keep their
 * sockets. The signal itself, the files and a config that does not load: reload-signal.test.ts.
 */
import { describe, expect, it } from "bun:test";
import type { AppConfig } from "../../src/config/types.ts";
import { startSim } from "../../src/sim/index.ts";
import {
	callTool,
	connectClient,
	machineConfig,
	type Stack,
	shellSubscriptions,
	startStack,
	testClient,
	until,
	untilMachineOnline,
	untilMachinesOnline,
} from "../helpers/stack.ts";
import { rawRequest, taskSession } from "../helpers/tasks-client.ts";

/** Reloads the stack's server with a changed copy of its running config. */
async function reload(stack: Stack, change: (config: AppConfig) => void) {
	const next = structuredClone(stack.server.services.config);
	change(next);
	return stack.server.services.reload(next);
}

const metricsStatus = async (stack: Stack, token: string) =>
	(
		await fetch(`${stack.server.url}/metrics`, {
			headers: { authorization: `Bearer ${token}` },
		})
	).status;

describe("reloading clients", () => {
	it("a rotated token is refused at once and the new one accepted; clients come and go", async () => {
		const stack = await startStack({
			clients: [
				testClient("boss", "boss-token-0123456789"),
				testClient("agent", "agent-token-old-0123456789", {
					access: "read-only",
				}),
			],
		});
		try {
			expect(await metricsStatus(stack, "agent-token-old-0123456789")).toBe(
				403,
			);
			const report = await reload(stack, (c) => {
				const agent = c.clients.find((x) => x.name === "agent");
				if (agent) agent.token = "agent-token-new-0123456789";
				c.clients.push(
					testClient("ops", "ops-token-0123456789", { access: "read-only" }),
				);
			});
			expect(report.clients).toEqual({
				added: ["ops"],
				removed: [],
				changed: ["agent"],
			});
			expect(await metricsStatus(stack, "agent-token-old-0123456789")).toBe(
				401,
			);
			expect(await metricsStatus(stack, "agent-token-new-0123456789")).toBe(
				403,
			);
			expect(await metricsStatus(stack, "ops-token-0123456789")).toBe(403);
			expect(await metricsStatus(stack, "boss-token-0123456789")).toBe(200);

			// A tool call as the rotated client sees its new self.
			const agent = await connectClient(stack.server.mcpUrl, {
				authorization: "Bearer agent-token-new-0123456789",
			});
			const { data } = await callTool<{ client: { name: string } }>(
				agent,
				"t3_machines",
			);
			expect(data.client.name).toBe("agent");
			await agent.close();

			await reload(stack, (c) => {
				c.clients = c.clients.filter((x) => x.name !== "ops");
			});
			expect(await metricsStatus(stack, "ops-token-0123456789")).toBe(401);
			expect(await metricsStatus(stack, "boss-token-0123456789")).toBe(200);
		} finally {
			await stack.stop();
		}
	});

	it("a narrower reach applies to the next call", async () => {
		const stack = await startStack({
			machines: [{ name: "a" }, { name: "b" }],
			clients: [testClient("agent", "agent-token-0123456789")],
		});
		try {
			const agent = await connectClient(stack.server.mcpUrl, {
				authorization: "Bearer agent-token-0123456789",
			});
			await untilMachinesOnline(agent);
			await reload(stack, (c) => {
				const client = c.clients[0];
				if (client) client.machines = ["a"];
			});
			const { data } = await callTool<{ machines: { name: string }[] }>(
				agent,
				"t3_machines",
			);
			expect(data.machines.map((m) => m.name)).toEqual(["a"]);
			await agent.close();
		} finally {
			await stack.stop();
		}
	});
});

describe("reloading machines", () => {
	it("an added machine connects, a removed one ends its waits failed, the others keep their socket", async () => {
		const stack = await startStack({
			machines: [{ name: "a" }, { name: "b" }],
		});
		const extra = await startSim({ stepMs: 5, coalesceMs: 5 });
		try {
			const client = await stack.client();
			await untilMachinesOnline(client);
			const simA = stack.sim("a");
			simA.record(true);
			const dispatched = await callTool<{ thread_id: string }>(
				client,
				"t3_dispatch",
				{ machine: "b", project: "demo", prompt: "long task" },
			);
			expect(dispatched.isError).toBe(false);
			// The wait is in progress once its first progress line came.
			const { promise: waitStarted, resolve: started } =
				Promise.withResolvers<void>();
			const waiting = callTool<{ outcome: string; error: string }>(
				client,
				"t3_wait",
				{ thread_id: dispatched.data.thread_id, timeout: 60 },
				{ onprogress: () => started() },
			);
			await waitStarted;

			const report = await reload(stack, (c) => {
				c.machines = c.machines.filter((m) => m.name !== "b");
				c.machines.push(machineConfig({ name: "c" }, extra.url, extra.token));
			});
			expect(report.machines).toEqual({
				added: ["c"],
				removed: ["b"],
				reconnected: [],
				updated: [],
			});

			const waited = await waiting;
			expect(waited.data.outcome).toBe("failed");
			expect(waited.data.error).toContain(
				'Machine "b" was removed from the configuration',
			);
			await untilMachineOnline(client, "c");
			const { data } = await callTool<{ machines: { name: string }[] }>(
				client,
				"t3_machines",
			);
			expect(data.machines.map((m) => m.name)).toEqual(["a", "c"]);
			// b's thread is now an unknown id.
			const read = await callTool(client, "t3_thread", {
				thread_id: dispatched.data.thread_id,
			});
			expect(read.isError).toBe(true);
			// a kept its one connection: it never subscribed to its shell again.
			expect(shellSubscriptions(simA)).toEqual([]);
			expect(simA.stats().connections).toBe(1);
			await until(
				() => stack.sim("b").stats().connections === 0,
				5_000,
				"b disconnected",
			);
		} finally {
			await stack.stop();
			await extra.stop();
		}
	});

	it("a machine whose url changed connects anew; a changed allowlist applies in place", async () => {
		const stack = await startStack({
			machines: [{ name: "a" }, { name: "b" }],
		});
		const moved = await startSim({ stepMs: 5, coalesceMs: 5 });
		try {
			const client = await stack.client();
			await untilMachinesOnline(client);
			const report = await reload(stack, (c) => {
				const a = c.machines.find((m) => m.name === "a");
				const b = c.machines.find((m) => m.name === "b");
				if (!a || !b) throw new Error("no machines");
				a.url = moved.url;
				a.token = moved.token;
				b.projects = ["nothing-matches"];
			});
			expect(report.machines).toEqual({
				added: [],
				removed: [],
				reconnected: ["a"],
				updated: ["b"],
			});
			await until(() => moved.stats().connections === 1, 10_000, "a moved");
			await untilMachinesOnline(client);
			expect(stack.sim("a").stats().connections).toBe(0);
			const { data } = await callTool<{
				machines: { name: string; url: string; projects: string[] }[];
			}>(client, "t3_machines");
			expect(data.machines.find((m) => m.name === "a")?.url).toBe(moved.url);
			expect(data.machines.find((m) => m.name === "b")?.projects).toEqual([]);
			// A run on the moved machine goes to the new server.
			const dispatched = await callTool<{ machine: string }>(
				client,
				"t3_dispatch",
				{ machine: "a", project: "demo", prompt: "say hi" },
			);
			expect(dispatched.isError).toBe(false);
			expect(moved.threadIds().length).toBe(1);
		} finally {
			await stack.stop();
			await moved.stop();
		}
	});

	it("a removed machine's MCP task ends failed", async () => {
		const stack = await startStack({
			machines: [{ name: "a" }, { name: "b" }],
			taskPollIntervalMs: 20,
		});
		try {
			const client = await stack.client({ era: "modern" });
			await untilMachinesOnline(client);
			const session = taskSession(client, stack.server.mcpUrl);
			const execution = await session.callTool("t3_dispatch", {
				machine: "b",
				project: "demo",
				prompt: "long task",
				wait: true,
			});
			expect(execution.kind).toBe("task");
			const taskId = execution.handle?.taskId as string;
			const get = async () => {
				const reply = await rawRequest(stack.server.mcpUrl, "tasks/get", {
					taskId,
				});
				if (reply.kind !== "result") throw new Error(reply.error.message);
				return reply.result as {
					status: string;
					result?: { structuredContent?: { wait?: { outcome: string } } };
				};
			};
			expect((await get()).status).toBe("working");
			await reload(stack, (c) => {
				c.machines = c.machines.filter((m) => m.name !== "b");
			});
			// It ended failed; its thread is now an unknown id, so the task is not found any more.
			const stored = () =>
				stack.server.services.db
					.query("SELECT status, result FROM tasks WHERE task_id = ?")
					.get(taskId) as { status: string; result: string | null };
			await until(
				() => stored().status !== "working",
				10_000,
				"the task to end",
			);
			expect(stored().status).toBe("completed");
			expect(stored().result).toContain('"outcome":"failed"');
			await expect(get()).rejects.toThrow("Task not found");
			await session.close();
		} finally {
			await stack.stop();
		}
	});
});
