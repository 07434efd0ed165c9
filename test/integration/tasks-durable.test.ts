/**
 * MCP Tasks live in the state file (issue 19): after a restart, also after kill -9, `tasks/get`
 * answers for a task from before, and one whose run settled while the connector was down
 * completes with that outcome. A vanished thread completes the task as `t3_wait` would
 * (failed / missing); a thread the allowlist hides now, or a machine gone from the config, reads
 * as not found; tasks expire after their TTL; with T3CODE_MCP_TOKEN every task method needs the
 * bearer. Requests are 2026-07-28 `tools/call` / `tasks/*` over HTTP (tasks-client.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { startServerProcess } from "../helpers/process.ts";
import {
	callTool,
	connectClient,
	demoMachine,
	type Stack,
	startStack,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";
import { type RawOptions, rawRequest } from "../helpers/tasks-client.ts";

type Task = {
	taskId: string;
	status: string;
	statusMessage?: string;
	result?: {
		structuredContent?: {
			outcome?: string;
			run_status?: string;
			message?: string | null;
			wait?: { outcome: string; message: string | null };
		};
	};
};

async function call(
	mcpUrl: string,
	name: string,
	args: Record<string, unknown>,
	options: RawOptions = {},
): Promise<Record<string, unknown>> {
	const reply = await rawRequest(
		mcpUrl,
		"tools/call",
		{ name, arguments: args },
		options,
	);
	if (reply.kind !== "result") throw new Error(reply.error.message);
	return reply.result;
}

/** Starts a long run and a task waiting on it (t3_dispatch wait: true). */
async function openTask(
	mcpUrl: string,
	project = "demo",
	options: RawOptions = {},
): Promise<{ taskId: string; threadId: string }> {
	const handle = await call(
		mcpUrl,
		"t3_dispatch",
		{ machine: "demo", project, prompt: "long task", wait: true },
		options,
	);
	expect(handle.resultType).toBe("task");
	const taskId = handle.taskId as string;
	const task = await get(mcpUrl, taskId, options);
	const threadId = task.statusMessage?.match(/thread (\S+):/)?.[1] as string;
	return { taskId, threadId };
}

async function get(
	mcpUrl: string,
	taskId: string,
	options: RawOptions = {},
): Promise<Task> {
	const reply = await rawRequest(mcpUrl, "tasks/get", { taskId }, options);
	if (reply.kind !== "result")
		throw new Error(`${reply.error.code}: ${reply.error.message}`);
	return reply.result as Task;
}

async function untilStatus(
	mcpUrl: () => string,
	taskId: string,
	status: string,
): Promise<Task> {
	let task: Task | undefined;
	await until(
		async () => {
			task = await get(mcpUrl(), taskId).catch(() => undefined);
			return task?.status === status;
		},
		15_000,
		`task ${taskId} ${status}`,
	);
	return task as Task;
}

describe("restart", () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await startStack({
			machines: [
				demoMachine([["secret", "/srv/t3/secret"]], ["*"]),
				{ name: "other" },
			],
		});
	});
	afterAll(() => stack?.stop());
	const url = () => stack.server.mcpUrl;

	test("open tasks survive a restart: one whose run settled meanwhile completes with it, the other waits on", async () => {
		const settled = await openTask(url());
		const open = await openTask(url());
		await stack.stopServer();
		stack.sim("demo").finishRun(settled.threadId);
		await stack.restartServer();
		const done = await untilStatus(url, settled.taskId, "completed");
		expect(done.result?.structuredContent?.wait?.outcome).toBe("completed");
		expect(done.result?.structuredContent?.wait?.message).toContain(
			"long task",
		);
		expect((await get(url(), open.taskId)).status).toBe("working");
		stack.sim("demo").finishRun(open.threadId);
		const later = await untilStatus(url, open.taskId, "completed");
		expect(later.result?.structuredContent?.wait?.outcome).toBe("completed");
	});

	test("a task whose thread vanished completes as t3_wait does: failed, run_status missing", async () => {
		const { taskId, threadId } = await openTask(url());
		stack.sim("demo").deleteThread(threadId);
		const done = await untilStatus(url, taskId, "completed");
		expect(done.result?.structuredContent?.wait).toMatchObject({
			outcome: "failed",
			run_status: "missing",
		});
	});

	test("a task on a thread the allowlist hides now, or on a machine gone from the config, is not found", async () => {
		const hidden = await openTask(url(), "secret");
		const visible = await openTask(url());
		await stack.restartServer((config) => {
			const demo = config.machines.find((m) => m.name === "demo");
			if (demo) demo.projects = ["demo"];
		});
		const reply = await rawRequest(url(), "tasks/get", {
			taskId: hidden.taskId,
		});
		expect(reply).toMatchObject({ kind: "error", error: { code: -32602 } });
		expect(
			await rawRequest(url(), "tasks/cancel", { taskId: hidden.taskId }),
		).toMatchObject({ kind: "error", error: { code: -32602 } });
		expect((await get(url(), visible.taskId)).status).toBe("working");
		await stack.restartServer((config) => {
			config.machines = config.machines.filter((m) => m.name !== "demo");
		});
		expect(
			await rawRequest(url(), "tasks/get", { taskId: visible.taskId }),
		).toMatchObject({ kind: "error", error: { code: -32602 } });
		// Back in the config: there again.
		await stack.restartServer();
		expect((await get(url(), visible.taskId)).status).toBe("working");
		stack.sim("demo").finishRun(visible.threadId);
		stack.sim("demo").finishRun(hidden.threadId);
	});
});

describe("TTL and bearer", () => {
	let stack: Stack;
	const TOKEN = "task-bearer-0123456789abcdef";
	beforeAll(async () => {
		stack = await startStack({ server: { taskTtlS: 1, token: TOKEN } });
	});
	afterAll(() => stack?.stop());
	const url = () => stack.server.mcpUrl;
	const bearer = { bearer: TOKEN };

	test("every task method needs the bearer", async () => {
		const { taskId, threadId } = await openTask(url(), "demo", bearer);
		for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
			const none = await rawRequest(url(), method, { taskId });
			expect(none.status).toBe(401);
			const wrong = await rawRequest(
				url(),
				method,
				{ taskId },
				{ bearer: "not-the-token-0123456789" },
			);
			expect(wrong.status).toBe(401);
		}
		expect((await get(url(), taskId, bearer)).status).toBe("working");
		stack.sim().finishRun(threadId);
	});

	test("a task expires its TTL after creation: then not found, and gone from the metric", async () => {
		const { taskId, threadId } = await openTask(url(), "demo", bearer);
		const task = (await rawRequest(
			url(),
			"tasks/get",
			{ taskId },
			bearer,
		)) as unknown as {
			result: { ttlMs: number };
		};
		expect(task.result.ttlMs).toBe(1000);
		await until(
			async () =>
				(await rawRequest(url(), "tasks/get", { taskId }, bearer)).kind ===
				"error",
			5_000,
			"expiry",
		);
		const reply = await rawRequest(url(), "tasks/get", { taskId }, bearer);
		expect(reply).toMatchObject({ kind: "error", error: { code: -32602 } });
		const metrics = await (
			await fetch(`${stack.server.url}/metrics`, {
				headers: { authorization: `Bearer ${TOKEN}` },
			})
		).text();
		expect(metrics).toContain('t3code_mcp_tasks{status="working"} 0');
		stack.sim().finishRun(threadId);
	});
});

describe("kill -9", () => {
	let dir: string;
	let sim: Sim;
	beforeAll(async () => {
		dir = mkdtempSync(join(tmpdir(), "t3code-mcp-tasks-crash-"));
		sim = await startSim({ stepMs: 5, coalesceMs: 5 });
	});
	afterAll(async () => {
		await sim?.stop();
		rmSync(dir, { recursive: true, force: true });
	});

	test("an open task survives kill -9; its run settled while down, so it completes after the restart", async () => {
		const options = {
			dir,
			statePath: join(dir, "state.sqlite"),
			machines: [{ name: "demo", url: sim.url, token: sim.token }],
		};
		const first = await startServerProcess(options);
		const client = await connectClient(first.mcpUrl);
		await untilMachinesOnline(client);
		await client.close();
		const { taskId, threadId } = await openTask(first.mcpUrl);
		await first.kill("SIGKILL");
		sim.finishRun(threadId);
		const second = await startServerProcess(options);
		try {
			const done = await untilStatus(() => second.mcpUrl, taskId, "completed");
			expect(done.result?.structuredContent?.wait?.outcome).toBe("completed");
			const check = await connectClient(second.mcpUrl);
			const waited = await callTool<{ outcome: string }>(check, "t3_wait", {
				thread_id: threadId,
			});
			expect(waited.data.outcome).toBe("completed");
			await check.close();
		} finally {
			expect(await second.kill("SIGTERM")).toBe(0);
		}
	});
});

describe("bounded store", () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await startStack({ maxTasks: 3 });
	});
	afterAll(() => stack?.stop());
	const url = () => stack.server.mcpUrl;

	test("past the bound the oldest finished task goes first, then the oldest open one", async () => {
		const a = await openTask(url());
		const b = await openTask(url());
		const c = await openTask(url());
		// b finishes (cancelled): it is the first to go when a fourth comes.
		expect(
			(await rawRequest(url(), "tasks/cancel", { taskId: b.taskId })).kind,
		).toBe("result");
		const d = await openTask(url());
		const known = async (taskId: string) =>
			(await rawRequest(url(), "tasks/get", { taskId })).kind === "result";
		expect(await known(b.taskId)).toBe(false);
		for (const t of [a, c, d]) expect(await known(t.taskId)).toBe(true);
		// All open now: the oldest open one (a) goes.
		const e = await openTask(url());
		expect(await known(a.taskId)).toBe(false);
		for (const t of [c, d, e]) expect(await known(t.taskId)).toBe(true);
		expect(stack.server.services.tasks.counts()).toMatchObject({ working: 3 });
		for (const t of [a, b, c, d, e]) stack.sim().finishRun(t.threadId);
	});
});
