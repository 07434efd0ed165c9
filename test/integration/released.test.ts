/**
 * What a released 0.1.x server adds to a thread, and how the pre-release engine falls back
 * (MCP client → server → sims over real sockets): withheld command output read with item_id
 * (`orchestration.getTurnItem`), T3's notices, a wake run T3 starts itself, runs started by
 * someone else, `runtime_mode: "auto"`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { FAILING_TEST_OUTPUT } from "../../src/sim/agent/agent.ts";
import type { Receiver } from "../helpers/receiver.ts";
import { callTool, launchOnSim, type Stack, until } from "../helpers/stack.ts";
import { startTwoEngines, stopTwoEngines } from "../helpers/two-engines.ts";

type Dispatched = { thread_id: string; run_id: string };
type Tool = {
	item_id: string;
	kind: string;
	title: string | null;
	status: string | null;
	exit_code: number | null;
	output_omitted: boolean;
	failed: boolean;
};
type Item = {
	item_id: string;
	kind: string;
	title: string;
	status: string;
	exit_code: number | null;
	output: string | null;
	truncated: boolean;
};
type Read = {
	runs: {
		id: string;
		tools: Tool[];
		notices: { kind: string; text: string }[];
		messages: { role: string; text: string }[];
	}[];
	item: Item | null;
	background_tasks: number;
};

let receiver: Receiver;
let stack: Stack;
let client: Client;
beforeAll(async () => {
	({ receiver, stack, client } = await startTwoEngines());
});
afterAll(() => stopTwoEngines({ stack, receiver }));

async function run(
	prompt: string,
	machine = "demo",
	extra: Record<string, unknown> = {},
): Promise<Dispatched> {
	const d = await callTool<Dispatched>(client, "t3_dispatch", {
		machine,
		project: "demo",
		prompt,
		...extra,
	});
	expect(d.isError).toBe(false);
	const w = await callTool(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 20,
	});
	expect(w.isError).toBe(false);
	return d.data;
}

const read = (args: Record<string, unknown>) =>
	callTool<Read>(client, "t3_thread", args);

describe("withheld command output", () => {
	test("tools say the output was withheld and failed; item_id reads it, capped like messages", async () => {
		const d = await run("run a failing command");
		const r = await read({ thread_id: d.thread_id });
		expect(r.isError).toBe(false);
		const tool = r.data.runs[0]?.tools.find((t) => t.exit_code === 1);
		expect(tool).toMatchObject({
			kind: "command_execution",
			exit_code: 1,
			output_omitted: true,
			failed: true,
		});
		expect(r.data.item).toBeNull();

		const withItem = await read({
			thread_id: d.thread_id,
			item_id: tool?.item_id,
		});
		expect(withItem.isError).toBe(false);
		const item = withItem.data.item as Item;
		expect(item).toMatchObject({
			item_id: tool?.item_id,
			kind: "command_execution",
			title: "Run command",
			exit_code: 1,
			truncated: true,
		});
		expect(FAILING_TEST_OUTPUT.length).toBeGreaterThan(8_000);
		expect(item.output?.length).toBe(8_000);
		expect(item.output?.endsWith("…[truncated]")).toBe(true);
		expect(item.output?.startsWith("ok   adds numbers\n")).toBe(true);
	});

	test("a short output comes whole; an unknown item_id is an error naming where ids come from", async () => {
		const d = await run("say hello");
		const r = await read({ thread_id: d.thread_id });
		const ls = r.data.runs[0]?.tools.find((t) => t.title === "Run command");
		expect(ls).toMatchObject({ output_omitted: true, failed: false });
		const withItem = await read({
			thread_id: d.thread_id,
			item_id: ls?.item_id,
		});
		expect(withItem.data.item).toMatchObject({
			output: "$ ls\nNOTES.md\nsrc\n",
			truncated: false,
			exit_code: 0,
		});
		const unknown = await read({ thread_id: d.thread_id, item_id: "nope" });
		expect(unknown.isError).toBe(true);
		expect(unknown.text).toBe(
			`item_id: thread "${d.thread_id}" has no item "nope". Take item_id from runs[].tools[] of t3_thread.`,
		);
	});

	test("on the pre-release engine: no flags, and item_id says the server cannot", async () => {
		const d = await run("say hello", "old");
		const r = await read({ thread_id: d.thread_id });
		const ls = r.data.runs[0]?.tools.find((t) => t.title === "Run command");
		expect(ls).toMatchObject({
			kind: "command_execution",
			output_omitted: false,
			failed: false,
		});
		const withItem = await read({
			thread_id: d.thread_id,
			item_id: ls?.item_id,
		});
		expect(withItem.isError).toBe(true);
		expect(withItem.text).toBe(
			`item_id: this T3 server (machine "old") does not support reading a tool call's whole output (orchestration.getTurnItem, T3 Code 0.1.x); t3_thread without item_id still shows each tool's title, status and exit code.`,
		);
	});
});

describe("runs T3 starts itself", () => {
	test("a background task: counted while it runs, notices in t3_thread, then T3's wake run with started_by t3", async () => {
		const d = await run("start a background task");
		const first = await read({ thread_id: d.thread_id });
		expect(first.data.runs[0]).toMatchObject({
			id: d.run_id,
			notices: [
				{
					kind: "system_notice",
					text: "A background command keeps running after this turn.",
				},
			],
		});
		expect(first.data.background_tasks).toBe(1);
		// The list reads the shell, which T3 sends coalesced: it shows the work once caught up.
		await until(async () => {
			const listed = await callTool<{
				threads: { thread_id: string; background_tasks: number }[];
			}>(client, "t3_threads", { machine: "demo" });
			return (
				listed.data.threads.find((t) => t.thread_id === d.thread_id)
					?.background_tasks === 1
			);
		});

		// The background command ends: T3 wakes the thread with a run of its own.
		stack.sim("demo").finishRun(d.thread_id);
		const completedOf = () =>
			receiver.deliveries
				.filter(
					(x) =>
						x.body.thread_id === d.thread_id &&
						x.body.type === "thread.completed",
				)
				.map((x) => x.body);
		await until(async () => {
			await stack.server.services.events.tracker.idle();
			await stack.server.services.events.delivery.idle();
			return completedOf().length === 2;
		});
		const [ours, wake] = completedOf();
		expect(ours).toMatchObject({ run_id: d.run_id, started_by: "connector" });
		expect(wake).toMatchObject({ started_by: "t3" });
		expect(wake?.run_id).not.toBe(d.run_id);

		const after = await read({ thread_id: d.thread_id, turns: 2 });
		expect(after.data.background_tasks).toBe(0);
		expect(after.data.runs[1]).toMatchObject({
			id: wake?.run_id,
			notices: [
				{
					kind: "notification",
					text: "Background command finished: sleep 5 && echo done: exit code 0",
				},
			],
		});
	});

	test("t3_interrupt with only background work left stops it as T3's Stop does: the latest run, no wake run", async () => {
		const d = await run("start a background task");
		// T3 keeps the work on the provider thread's roster, which a projection reader sees too.
		const rosterOf = () =>
			(
				stack.sim("demo").projection(d.thread_id) as {
					providerThreads: { pendingBackgroundTasks?: unknown[] }[];
				}
			).providerThreads.flatMap((t) => t.pendingBackgroundTasks ?? []);
		expect(rosterOf()).toHaveLength(1);
		const stopped = await callTool<{
			run_id: string;
			run_status: string;
			interrupted: boolean;
		}>(client, "t3_interrupt", { thread_id: d.thread_id });
		expect(stopped.isError).toBe(false);
		expect(stopped.data).toMatchObject({
			run_id: d.run_id,
			run_status: "completed",
			interrupted: true,
		});
		expect(stopped.text).toContain(
			`Run ${d.run_id} had already ended; T3 was asked to stop the 1 background task it left running, and lists none now.`,
		);
		expect(rosterOf()).toEqual([]);
		// t3_thread then says none, once the coalesced shell caught up with the stop too.
		await until(
			async () =>
				(await read({ thread_id: d.thread_id })).data.background_tasks === 0,
		);
		// Stopped work wakes nobody: ending the thread's work now starts no run of T3's own.
		stack.sim("demo").finishRun(d.thread_id);
		await stack.server.services.events.tracker.idle();
		const runs = (
			stack.sim("demo").projection(d.thread_id) as { runs: unknown[] }
		).runs;
		expect(runs).toHaveLength(1);
		// Nothing is left to stop.
		const again = await callTool<{ interrupted: boolean }>(
			client,
			"t3_interrupt",
			{ thread_id: d.thread_id },
		);
		expect(again.data.interrupted).toBe(false);
	});

	test("the pre-release engine: no background work, no notices, no wake run", async () => {
		const d = await run("start a background task", "old");
		const first = await read({ thread_id: d.thread_id });
		expect(first.data.runs[0]).toMatchObject({ id: d.run_id, notices: [] });
		expect(first.data.background_tasks).toBe(0);
		stack.sim("old").finishRun(d.thread_id);
		await stack.server.services.events.tracker.idle();
		const projection = stack.sim("old").projection(d.thread_id) as {
			runs: unknown[];
			turnItems: { type: string }[];
		};
		expect(projection.runs).toHaveLength(1);
		expect(
			projection.turnItems.filter((i) =>
				["system_notice", "notification"].includes(i.type),
			),
		).toEqual([]);
	});

	test("a run started through another client is started_by user", async () => {
		const threadId = await launchOnSim(stack.sim("demo"), "demo", "say hi");
		const watched = await callTool(client, "t3_watch", {
			thread_id: threadId,
			enabled: true,
		});
		expect(watched.isError).toBe(false);
		await until(async () => {
			await stack.server.services.events.tracker.idle();
			await stack.server.services.events.delivery.idle();
			return receiver.deliveries.some(
				(x) =>
					x.body.thread_id === threadId && x.body.type === "thread.completed",
			);
		});
		const event = receiver.deliveries.find(
			(x) =>
				x.body.thread_id === threadId && x.body.type === "thread.completed",
		);
		expect(event?.body.started_by).toBe("user");
	});
});

describe("runtime_mode auto", () => {
	test("is accepted and shown as the thread's mode", async () => {
		const d = await run("say hello", "demo", { runtime_mode: "auto" });
		const r = await callTool<{ runtime_mode?: string }>(client, "t3_dispatch", {
			thread_id: d.thread_id,
			prompt: "again",
		});
		expect(r.isError).toBe(false);
		expect(stack.sim("demo").projection(d.thread_id)).toMatchObject({
			thread: { runtimeMode: "auto" },
		});
	});
});
