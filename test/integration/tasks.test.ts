/**
 * MCP Tasks end to end (issue 19): the official requester library `@modelcontextprotocol/ext-tasks`
 * drives the real HTTP server against a simulated T3 machine over real sockets, on 2026-07-28 and
 * in the 2025-11-25 form (`tasks/result`). Dispatch and be woken, questions, cancel (the run keeps
 * going), an explicit timeout, clients without the extension in both eras, idempotent replays,
 * unknown ids, task notifications over `subscriptions/listen`. Restarts, TTL, the bearer and
 * hidden threads: tasks-durable.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	resultFromTaskOutcome,
	type TaskEnabledSession,
} from "@modelcontextprotocol/ext-tasks/client";
import type { TaskId } from "@modelcontextprotocol/ext-tasks/core";
import {
	callTool,
	ERAS,
	type Stack,
	startStack,
	until,
	untilRunning,
} from "../helpers/stack.ts";
import {
	MODERN,
	rawRequest,
	TASKS,
	taskSession,
} from "../helpers/tasks-client.ts";

type ToolResult = {
	structuredContent?: Record<string, unknown>;
	content: { type: string; text?: string }[];
	isError?: boolean;
};
type Wait = {
	thread_id: string;
	outcome: string;
	run_id: string | null;
	message: string | null;
	question: { request_id: string } | null;
};

let stack: Stack;
let client: Client;
let session: TaskEnabledSession;

beforeAll(async () => {
	stack = await startStack({ taskPollIntervalMs: 20 });
	client = await stack.client({ era: "modern" });
	session = taskSession(client, stack.server.mcpUrl);
});
afterAll(async () => {
	await session?.close();
	await stack?.stop();
});

const url = () => stack.server.mcpUrl;

async function taskGet(taskId: string) {
	const reply = await rawRequest(url(), "tasks/get", { taskId });
	if (reply.kind !== "result") throw new Error(reply.error.message);
	return reply.result as {
		taskId: string;
		status: string;
		statusMessage?: string;
		ttlMs: number;
		pollIntervalMs: number;
		result?: ToolResult;
	};
}

/** A t3_dispatch with wait: true through the library; the execution and its thread. */
async function dispatchTask(
	prompt: string,
	extra: Record<string, unknown> = {},
) {
	const execution = await session.callTool("t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt,
		wait: true,
		...extra,
	});
	expect(execution.kind).toBe("task");
	const taskId = execution.handle?.taskId as TaskId;
	const threadId = (await taskGet(taskId)).statusMessage?.match(
		/thread (\S+):/,
	)?.[1] as string;
	return { execution, taskId, threadId };
}

const dataOf = (result: ToolResult) =>
	result.structuredContent as Record<string, unknown> & { wait: Wait | null };

describe("2026-07-28 with @modelcontextprotocol/ext-tasks", () => {
	test("server/discover lists the extension", () => {
		const caps = client.getServerCapabilities() as {
			extensions?: Record<string, unknown>;
		};
		expect(caps.extensions?.[TASKS]).toEqual({});
	});

	test("dispatch with wait: true → a task at once → polled → completed with the final message", async () => {
		const { execution, taskId, threadId } =
			await dispatchTask("long task: hello");
		expect(taskId.length).toBeGreaterThanOrEqual(22);
		const snapshot = await session.task(taskId).snapshot();
		expect(snapshot.status).toBe("working");
		expect(snapshot.statusMessage).toContain(`Waiting on thread ${threadId}`);
		stack.sim().finishRun(threadId);
		const { outcome } = await execution.settle();
		const result = resultFromTaskOutcome(outcome) as ToolResult;
		const data = dataOf(result);
		expect(data.thread_id).toBe(threadId);
		expect(data.wait?.outcome).toBe("completed");
		expect(data.wait?.message).toContain("long task");
		// Exactly what the blocking call returns for the same settled run.
		const blocking = await callTool<Wait>(client, "t3_wait", {
			thread_id: threadId,
		});
		expect({ ...data.wait, elapsed_s: 0 }).toEqual({
			...blocking.data,
			elapsed_s: 0,
		});
	});

	test("a question ends the task → t3_answer → a new wait task → completed", async () => {
		const { execution, threadId } = await dispatchTask(
			"please ask me a question",
		);
		const asked = dataOf(
			resultFromTaskOutcome((await execution.settle()).outcome) as ToolResult,
		);
		expect(asked.wait?.outcome).toBe("question");
		const answered = await callTool(client, "t3_answer", {
			thread_id: threadId,
			request_id: asked.wait?.question?.request_id,
			answers: { color: "Red" },
		});
		expect(answered.isError).toBe(false);
		const again = await session.callTool("t3_wait", { thread_id: threadId });
		const done = resultFromTaskOutcome(
			(await again.settle()).outcome,
		) as ToolResult;
		expect((done.structuredContent as unknown as Wait).outcome).toBe(
			"completed",
		);
	});

	test("an outcome already there is the plain result, not a task; so is timeout 0", async () => {
		const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "say hi",
		});
		await callTool(client, "t3_wait", { thread_id: d.data.thread_id });
		const settled = await session.callTool("t3_wait", {
			thread_id: d.data.thread_id,
		});
		expect(settled.kind).toBe("immediate");
		const running = await callTool<{ thread_id: string }>(
			client,
			"t3_dispatch",
			{ machine: "demo", project: "demo", prompt: "long task" },
		);
		const look = await session.callTool("t3_wait", {
			thread_id: running.data.thread_id,
			timeout: 0,
		});
		expect(look.kind).toBe("immediate");
		const result = resultFromTaskOutcome(
			(await look.settle()).outcome,
		) as ToolResult;
		expect((result.structuredContent as unknown as Wait).outcome).toBe(
			"timeout",
		);
		stack.sim().finishRun(running.data.thread_id);
	});

	test("an explicit timeout is honoured in task mode: the task completes with outcome timeout", async () => {
		const running = await callTool<{ thread_id: string }>(
			client,
			"t3_dispatch",
			{ machine: "demo", project: "demo", prompt: "long task" },
		);
		const execution = await session.callTool("t3_wait", {
			thread_id: running.data.thread_id,
			timeout: 0.3,
		});
		expect(execution.kind).toBe("task");
		const result = resultFromTaskOutcome(
			(await execution.settle()).outcome,
		) as ToolResult;
		expect((result.structuredContent as unknown as Wait).outcome).toBe(
			"timeout",
		);
		expect(result.content.at(-1)?.text).toContain("not interrupted");
		stack.sim().finishRun(running.data.thread_id);
	});

	test("cancel: an empty ack, the task ends cancelled saying the run goes on, and the run does", async () => {
		const { taskId, threadId } = await dispatchTask("long task: keep going");
		const ack = await rawRequest(url(), "tasks/cancel", { taskId });
		expect(ack).toMatchObject({ kind: "result", status: 200 });
		expect(
			Object.keys((ack as { result: object }).result).filter(
				(k) => k !== "_meta" && k !== "resultType",
			),
		).toEqual([]);
		const cancelled = await taskGet(taskId);
		expect(cancelled.status).toBe("cancelled");
		expect(cancelled.statusMessage).toContain("keeps going");
		await untilRunning(client, threadId);
		stack.sim().finishRun(threadId);
		const waited = await callTool<Wait>(client, "t3_wait", {
			thread_id: threadId,
		});
		expect(waited.data.outcome).toBe("completed");
		// Cancelled stays cancelled.
		expect((await taskGet(taskId)).status).toBe("cancelled");
	});

	test("an unknown id gets the extension's error; a request without the extension gets -32021", async () => {
		const unknown = await rawRequest(url(), "tasks/get", {
			taskId: "no-such-task-0123456789",
		});
		expect(unknown).toMatchObject({
			kind: "error",
			error: { code: -32602 },
		});
		const cancel = await rawRequest(url(), "tasks/cancel", {
			taskId: "no-such-task-0123456789",
		});
		expect(cancel).toMatchObject({ kind: "error", error: { code: -32602 } });
		const undeclared = await rawRequest(
			url(),
			"tasks/get",
			{ taskId: "no-such-task-0123456789" },
			{ tasks: false },
		);
		expect(undeclared).toMatchObject({
			kind: "error",
			error: {
				code: -32021,
				data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
			},
		});
	});

	test("a t3_wait request without the extension blocks as always, even after one that declared it", async () => {
		const { threadId } = await dispatchTask("long task");
		const plain = rawRequest(
			url(),
			"tools/call",
			{ name: "t3_wait", arguments: { thread_id: threadId } },
			{ tasks: false },
		);
		await until(() => {
			stack.sim().finishRun(threadId);
			return Promise.race([
				plain.then(() => true),
				Bun.sleep(5).then(() => false),
			]);
		});
		const reply = await plain;
		expect(reply.kind).toBe("result");
		const result = (reply as { result: Record<string, unknown> }).result;
		expect(result.resultType).toBe("complete");
		expect((result.structuredContent as Wait).outcome).toBe("completed");
	});

	test("subscriptions/listen with task ids: acknowledged, then notifications/tasks on each change", async () => {
		const { taskId, threadId, execution } = await dispatchTask("long task");
		const controller = new AbortController();
		const response = await fetch(url(), {
			method: "POST",
			signal: controller.signal,
			headers: {
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
				"mcp-protocol-version": MODERN,
				"mcp-method": "subscriptions/listen",
			},
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: "listen-1",
				method: "subscriptions/listen",
				params: {
					notifications: { taskIds: [taskId, "unknown-task-id-000000"] },
					_meta: {
						"io.modelcontextprotocol/protocolVersion": MODERN,
						"io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
						"io.modelcontextprotocol/clientCapabilities": {
							extensions: { [TASKS]: {} },
						},
					},
				},
			}),
		});
		expect(response.headers.get("content-type")).toContain("text/event-stream");
		const reader = (response.body as ReadableStream<Uint8Array>).getReader();
		const decoder = new TextDecoder();
		const seen: { method: string; params: Record<string, unknown> }[] = [];
		let buffer = "";
		const read = async (until: (m: (typeof seen)[number]) => boolean) => {
			for (;;) {
				const { value, done } = await reader.read();
				if (done) throw new Error("stream ended");
				buffer += decoder.decode(value, { stream: true });
				let at = buffer.indexOf("\n\n");
				while (at >= 0) {
					const frame = buffer.slice(0, at);
					buffer = buffer.slice(at + 2);
					const data = frame
						.split("\n")
						.find((l) => l.startsWith("data:"))
						?.slice(5);
					if (data) {
						const message = JSON.parse(data);
						seen.push(message);
						if (until(message)) return message;
					}
					at = buffer.indexOf("\n\n");
				}
			}
		};
		const ack = await read(
			(m) => m.method === "notifications/subscriptions/acknowledged",
		);
		expect(ack.params.notifications).toEqual({ taskIds: [taskId] });
		await read(
			(m) =>
				m.method === "notifications/tasks" && m.params.status === "working",
		);
		stack.sim().finishRun(threadId);
		const completed = await read(
			(m) =>
				m.method === "notifications/tasks" && m.params.status === "completed",
		);
		expect(completed.params).toMatchObject({
			taskId,
			status: "completed",
			result: {
				resultType: "complete",
				structuredContent: { thread_id: threadId },
			},
		});
		// The same task tasks/get returns.
		const polled = await taskGet(taskId);
		const { _meta: _n, ...notified } = completed.params;
		const {
			_meta: _p,
			resultType: _r,
			...got
		} = polled as Record<string, unknown>;
		expect(notified).toEqual(got);
		controller.abort();
		await execution.close();
	});

	test("idempotent replay of a waiting dispatch waits again: the same run, never a stale result", async () => {
		const key = `replay-${crypto.randomUUID()}`;
		const first = await callTool<{ thread_id: string; wait: null }>(
			client,
			"t3_dispatch",
			{
				machine: "demo",
				project: "demo",
				prompt: "long task",
				idempotency_key: key,
			},
		);
		expect(first.data.wait).toBeNull();
		const { execution, threadId } = await dispatchTask("long task", {
			idempotency_key: key,
		});
		expect(threadId).toBe(first.data.thread_id);
		stack.sim().finishRun(threadId);
		const data = dataOf(
			resultFromTaskOutcome((await execution.settle()).outcome) as ToolResult,
		);
		expect(data.wait?.outcome).toBe("completed");
		// Replayed blocking once more: the settled run again, not a timeout.
		const again = await callTool<{ thread_id: string; wait: Wait }>(
			client,
			"t3_dispatch",
			{
				machine: "demo",
				project: "demo",
				prompt: "long task",
				idempotency_key: key,
				wait: true,
			},
		);
		expect(again.data.thread_id).toBe(threadId);
		expect(again.data.wait.outcome).toBe("completed");
		expect(again.data.wait.run_id).toBe(data.wait?.run_id as string);
	});
});

describe.each(ERAS)("without the extension (%s era)", (era) => {
	test("t3_wait blocks; t3_dispatch wait: true blocks and returns {…dispatch, wait}; wait is null otherwise", async () => {
		const plainClient = await stack.client({ era });
		const waited = await callTool<{
			thread_id: string;
			run_id: string;
			wait: Wait;
		}>(plainClient, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "say hi",
			wait: true,
		});
		expect(waited.isError).toBe(false);
		expect(waited.data.wait).toMatchObject({
			thread_id: waited.data.thread_id,
			outcome: "completed",
			run_id: waited.data.run_id,
		});
		expect(waited.data.wait.message).toContain("say hi");
		const plain = await callTool<{ wait: unknown }>(
			plainClient,
			"t3_dispatch",
			{
				machine: "demo",
				project: "demo",
				prompt: "say hi",
			},
		);
		expect(plain.data.wait).toBeNull();
		const w = await callTool<Wait>(plainClient, "t3_wait", {
			thread_id: waited.data.thread_id,
		});
		expect(w.data.outcome).toBe("completed");
	});
});

describe("2025-11-25 form with @modelcontextprotocol/ext-tasks", () => {
	test("initialize lists capabilities.tasks, the tools say taskSupport optional; a task → tasks/result", async () => {
		const legacy = await stack.client({ era: "legacy" });
		const caps = legacy.getServerCapabilities() as { tasks?: unknown };
		expect(caps.tasks).toEqual({
			cancel: {},
			requests: { tools: { call: {} } },
		});
		const { tools } = await legacy.listTools();
		expect(tools.find((t) => t.name === "t3_wait")?.execution).toEqual({
			taskSupport: "optional",
		});
		const legacySession = taskSession(legacy, url());
		try {
			const execution = await legacySession.callTool(
				"t3_dispatch",
				{ machine: "demo", project: "demo", prompt: "long task", wait: true },
				{ task: { preference: "prefer" } },
			);
			expect(execution.kind).toBe("task");
			const taskId = execution.handle?.taskId as TaskId;
			const view = await legacySession.task(taskId).snapshot();
			expect(view.status).toBe("working");
			const threadId = view.statusMessage?.match(
				/thread (\S+):/,
			)?.[1] as string;
			stack.sim().finishRun(threadId);
			const result = resultFromTaskOutcome(
				(await execution.settle()).outcome,
			) as ToolResult;
			expect(dataOf(result).wait?.outcome).toBe("completed");
		} finally {
			await legacySession.close();
		}
	});
});
