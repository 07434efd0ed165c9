/**
 * A run's error text after `t3_manage` `retry_preparation` (issue 18 follow-up, MCP client →
 * server → sim over real sockets): the failed preparation's `error` item stays among the run's
 * items, yet once the retried run runs, completes or is interrupted no output shows it; a run
 * that fails again shows the new failure.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilRunning,
} from "../helpers/stack.ts";

type Run = {
	status: string;
	error: string | null;
	error_class: string | null;
};
type Read = { latest_run: Run };
type Wait = {
	outcome: string;
	error: string | null;
	error_class: string | null;
};

let stack: Stack;
let client: Client;
let receiver: Receiver;
beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
		machines: [
			{
				name: "demo",
				sim: { projects: [{ title: "demo", workspaceRoot: "/srv/t3/demo" }] },
				projects: ["demo"],
			},
		],
	});
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

async function dispatch(args: Record<string, unknown>): Promise<string> {
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		...args,
	});
	expect([d.isError, d.text]).toEqual([false, expect.any(String)]);
	return d.data.thread_id;
}

async function wait(threadId: string): Promise<Wait> {
	const w = await callTool<Wait>(client, "t3_wait", {
		thread_id: threadId,
		timeout: 20,
	});
	expect(w.isError).toBe(false);
	return w.data;
}

async function latest(threadId: string): Promise<Run> {
	const r = await callTool<Read>(client, "t3_thread", { thread_id: threadId });
	expect(r.isError).toBe(false);
	return r.data.latest_run;
}

/** Dispatches into a worktree from a missing base ref; returns the thread once it failed. */
async function failedPreparing(prompt: string, baseRef: string) {
	const threadId = await dispatch({
		prompt,
		workspace: "worktree",
		base_ref: baseRef,
	});
	const failed = await wait(threadId);
	expect(failed).toMatchObject({
		outcome: "failed",
		error_class: "workspace_preparation",
	});
	expect(failed.error).toContain(`invalid reference: ${baseRef}`);
	return threadId;
}

/** Another thread creates the branch, so a retry finds the base ref. */
async function createBranch(branch: string) {
	const maker = await dispatch({
		prompt: "say hello",
		workspace: "worktree",
		branch,
	});
	expect((await wait(maker)).outcome).toBe("completed");
}

async function retry(threadId: string) {
	const r = await callTool(client, "t3_manage", {
		thread_id: threadId,
		action: "retry_preparation",
	});
	expect([r.isError, r.text]).toEqual([false, expect.any(String)]);
}

const eventsOf = (threadId: string) =>
	receiver.deliveries
		.filter((x) => x.body.thread_id === threadId)
		.map((x) => ({
			type: x.body.type,
			error: x.body.error,
			error_class: x.body.error_class,
		}));

describe("a run's error after retry_preparation", () => {
	test("running, then interrupted: the old preparation error is gone everywhere", async () => {
		const threadId = await failedPreparing("a long task", "retry/running");
		await createBranch("retry/running");
		await retry(threadId);
		await untilRunning(client, threadId);
		expect(await latest(threadId)).toMatchObject({
			status: "running",
			error: null,
			error_class: null,
		});
		await callTool(client, "t3_interrupt", { thread_id: threadId });
		const w = await wait(threadId);
		expect(w).toMatchObject({
			outcome: "interrupted",
			error: null,
			error_class: null,
		});
		expect(await latest(threadId)).toMatchObject({
			status: "interrupted",
			error: null,
		});
		await until(() => eventsOf(threadId).length === 2, 10_000, "both events");
		expect(eventsOf(threadId)).toEqual([
			{
				type: "thread.failed",
				error: expect.stringContaining("invalid reference: retry/running"),
				error_class: "workspace_preparation",
			},
			{ type: "thread.interrupted", error: null, error_class: null },
		]);
	});

	test("completed: t3_thread, t3_wait and the event show no error", async () => {
		const threadId = await failedPreparing("edit a file", "retry/done");
		await createBranch("retry/done");
		await retry(threadId);
		expect(await wait(threadId)).toMatchObject({
			outcome: "completed",
			error: null,
			error_class: null,
		});
		expect(await latest(threadId)).toMatchObject({
			status: "completed",
			error: null,
			error_class: null,
		});
		await until(() => eventsOf(threadId).length === 2, 10_000, "both events");
		expect(eventsOf(threadId)[1]).toEqual({
			type: "thread.completed",
			error: null,
			error_class: null,
		});
	});

	test("failed again: the new failure's text and class, not the preparation's", async () => {
		const threadId = await failedPreparing("this will fail", "retry/again");
		await createBranch("retry/again");
		await retry(threadId);
		const w = await wait(threadId);
		expect(w.outcome).toBe("failed");
		expect(w.error).toBe("sim agent failure");
		expect(w.error_class).not.toBe("workspace_preparation");
		const run = await latest(threadId);
		expect(run).toMatchObject({ status: "failed", error: "sim agent failure" });
		expect(run.error_class).toBe(w.error_class);
		await until(() => eventsOf(threadId).length === 2, 10_000, "both events");
		expect(eventsOf(threadId)[1]).toMatchObject({
			type: "thread.failed",
			error: "sim agent failure",
		});
	});

	test("failed preparing again: the second preparation's reason", async () => {
		// The retry's base exists, but the branch it would make is taken: a different reason.
		const threadId = await dispatch({
			prompt: "say hello",
			workspace: "worktree",
			base_ref: "retry/base",
			branch: "retry/taken",
		});
		expect((await wait(threadId)).error).toContain(
			"invalid reference: retry/base",
		);
		await createBranch("retry/base");
		await createBranch("retry/taken");
		await retry(threadId);
		const w = await wait(threadId);
		expect(w).toMatchObject({
			outcome: "failed",
			error_class: "workspace_preparation",
		});
		expect(w.error).toContain("a branch named 'retry/taken' already exists");
		expect((await latest(threadId)).error).toBe(w.error);
		// Each failure is reported, each with its own reason.
		await until(() => eventsOf(threadId).length === 2, 10_000, "both events");
		expect(eventsOf(threadId)).toEqual([
			{
				type: "thread.failed",
				error: expect.stringContaining("invalid reference: retry/base"),
				error_class: "workspace_preparation",
			},
			{
				type: "thread.failed",
				error: w.error,
				error_class: "workspace_preparation",
			},
		]);
	});
});
