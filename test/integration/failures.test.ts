/**
 * Failures that say why, against the simulator's released 0.1.x shapes (MCP client → server →
 * sim over real sockets): a usage limit (class, reset time, T3's auto-resume) and a failed
 * workspace preparation in t3_wait, t3_thread, t3_threads and events.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import type { Delivery, Receiver } from "../helpers/receiver.ts";
import { callTool, type Stack, until } from "../helpers/stack.ts";
import { startTwoEngines, stopTwoEngines } from "../helpers/two-engines.ts";

type Dispatched = { thread_id: string; run_id: string };
type Failure = {
	error_class: string | null;
	reset_at: string | null;
	auto_resume: boolean;
};
type Waited = Failure & {
	outcome: string;
	run_id: string | null;
	error: string | null;
};
type Read = {
	latest_run: (Failure & { id: string; status: string }) | null;
	runs: (Failure & {
		id: string;
		notices: { kind: string; text: string }[];
		tools: { kind: string; status: string | null; exit_code: number | null }[];
	})[];
	snoozed_until: string | null;
	background_tasks: number;
};
type Listed = {
	threads: (Failure & {
		thread_id: string;
		state: string;
		snoozed_until: string | null;
		background_tasks: number;
	})[];
};

let receiver: Receiver;
/** The text of the last t3_wait `run` made. */
let waitText = "";
let stack: Stack;
let client: Client;
beforeAll(async () => {
	({ receiver, stack, client } = await startTwoEngines());
});
afterAll(() => stopTwoEngines({ stack, receiver }));

async function run(
	prompt: string,
	machine = "demo",
): Promise<{ d: Dispatched; w: Waited }> {
	const d = await callTool<Dispatched>(client, "t3_dispatch", {
		machine,
		project: "demo",
		prompt,
	});
	expect(d.isError).toBe(false);
	const w = await callTool<Waited>(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 20,
	});
	expect(w.isError).toBe(false);
	waitText = w.text;
	return { d: d.data, w: w.data };
}

const eventsOf = async (
	threadId: string,
	type: string,
): Promise<Delivery[]> => {
	await stack.server.services.events.tracker.idle();
	await stack.server.services.events.delivery.idle();
	return receiver.deliveries.filter(
		(x) => x.body.thread_id === threadId && x.body.type === type,
	);
};

describe("a usage limit", () => {
	let d: Dispatched;
	let w: Waited;
	beforeAll(async () => {
		({ d, w } = await run("hit the usage limit now"));
	});

	test("t3_wait: failed, class usage_limit, the reset time, T3 resumes by itself", () => {
		expect(w).toMatchObject({
			outcome: "failed",
			run_id: d.run_id,
			error_class: "usage_limit",
			auto_resume: true,
		});
		expect(w.error).toContain("usage limit");
		expect(Date.parse(w.reset_at ?? "")).toBeGreaterThan(Date.now());
		expect(waitText).toBe(
			`${JSON.stringify(w)}\nThe provider's usage limit was reached; it resets at ${w.reset_at}, and T3 then resumes this thread by itself (a run of its own: events say started_by "t3").`,
		);
	});

	test("t3_thread: latest_run and runs[] say the same", async () => {
		const r = await callTool<Read>(client, "t3_thread", {
			thread_id: d.thread_id,
		});
		const failure = {
			error_class: "usage_limit",
			reset_at: w.reset_at,
			auto_resume: true,
		};
		expect(r.data.latest_run).toMatchObject({ id: d.run_id, ...failure });
		expect(r.data.runs[0]).toMatchObject({ id: d.run_id, ...failure });
		expect(r.data.background_tasks).toBe(0);
		expect(r.data.snoozed_until).toBeNull();
	});

	test("t3_threads: the row from the held shell", async () => {
		await until(async () => {
			const l = await callTool<Listed>(client, "t3_threads", {
				state: "attention",
			});
			const row = l.data.threads.find((t) => t.thread_id === d.thread_id);
			return row?.error_class === "usage_limit";
		});
		const l = await callTool<Listed>(client, "t3_threads", {
			state: "attention",
		});
		expect(
			l.data.threads.find((t) => t.thread_id === d.thread_id),
		).toMatchObject({
			error_class: "usage_limit",
			reset_at: w.reset_at,
			auto_resume: true,
			snoozed_until: null,
			background_tasks: 0,
		});
	});

	test("the thread.failed event carries the class, the reset and who started the run", async () => {
		const [event] = await eventsOf(d.thread_id, "thread.failed");
		expect(event?.body).toMatchObject({
			run_id: d.run_id,
			error_class: "usage_limit",
			reset_at: w.reset_at,
			auto_resume: true,
			started_by: "connector",
		});
	});

	test("at the reset T3 resumes by itself: its continuation is started_by t3", async () => {
		stack.sim("demo").finishRun(d.thread_id);
		await until(
			async () => (await eventsOf(d.thread_id, "thread.completed")).length > 0,
		);
		const [resumed] = await eventsOf(d.thread_id, "thread.completed");
		expect(resumed?.body).toMatchObject({
			started_by: "t3",
			error_class: null,
			auto_resume: false,
		});
		expect(resumed?.body.run_id).not.toBe(d.run_id);
		// The shell may show the continuation a moment after its stream did.
		await until(async () => {
			const l = await callTool<Listed>(client, "t3_threads", {
				machine: "demo",
			});
			const row = l.data.threads.find((t) => t.thread_id === d.thread_id);
			return row?.state === "settled";
		});
		const l = await callTool<Listed>(client, "t3_threads", {
			machine: "demo",
		});
		expect(
			l.data.threads.find((t) => t.thread_id === d.thread_id),
		).toMatchObject({ error_class: null, reset_at: null, auto_resume: false });
	});
});

describe("a failed workspace preparation", () => {
	test("says workspace_preparation everywhere, with T3's notice in the run", async () => {
		const { d, w } = await run("fail preparing the workspace");
		expect(w).toMatchObject({
			outcome: "failed",
			error_class: "workspace_preparation",
			reset_at: null,
			auto_resume: false,
		});
		expect(w.error).toContain("Workspace preparation failed");
		const r = await callTool<Read>(client, "t3_thread", {
			thread_id: d.thread_id,
		});
		expect(r.data.latest_run?.error_class).toBe("workspace_preparation");
		expect(r.data.runs[0]?.notices).toEqual([
			{
				kind: "system_notice",
				text: "Workspace preparation failed: the setup script exited with code 1.",
			},
		]);
		expect(r.data.runs[0]?.tools[0]).toMatchObject({
			kind: "command_execution",
			status: "failed",
			exit_code: 1,
		});
		const [event] = await eventsOf(d.thread_id, "thread.failed");
		expect(event?.body).toMatchObject({
			error_class: "workspace_preparation",
			reset_at: null,
			auto_resume: false,
		});
		// The shell's class alone is "unknown"; the row agrees with the run's error item.
		await until(async () => {
			const l = await callTool<Listed>(client, "t3_threads", {
				machine: "demo",
			});
			return (
				l.data.threads.find((t) => t.thread_id === d.thread_id)?.state ===
				"attention"
			);
		});
		const l = await callTool<Listed>(client, "t3_threads", { machine: "demo" });
		expect(
			l.data.threads.find((t) => t.thread_id === d.thread_id),
		).toMatchObject({
			error_class: "workspace_preparation",
			reset_at: null,
			auto_resume: false,
		});
	});

	test("an ordinary failure is a provider error, and a success has no class", async () => {
		const failed = await run("fail please");
		expect(failed.w).toMatchObject({
			outcome: "failed",
			error_class: "provider_error",
			reset_at: null,
			auto_resume: false,
		});
		const ok = await run("say hello");
		expect(ok.w).toMatchObject({
			outcome: "completed",
			error_class: null,
			reset_at: null,
			auto_resume: false,
		});
	});
});

describe("on the pre-release engine", () => {
	test("a failure has the class its error item gives, in t3_threads too; the shell says nothing more", async () => {
		const { d, w } = await run("hit the usage limit", "old");
		// The pre-release has no usage_limit class, reset time or recovery.
		expect(w).toMatchObject({
			outcome: "failed",
			error_class: "provider_error",
			reset_at: null,
			auto_resume: false,
		});
		await until(async () => {
			const l = await callTool<Listed>(client, "t3_threads", {
				machine: "old",
			});
			return (
				l.data.threads.find((t) => t.thread_id === d.thread_id)?.state ===
				"attention"
			);
		});
		const l = await callTool<Listed>(client, "t3_threads", { machine: "old" });
		// Its shell has no class; the row reads the run's error item, as t3_wait does.
		expect(
			l.data.threads.find((t) => t.thread_id === d.thread_id),
		).toMatchObject({
			error_class: "provider_error",
			reset_at: null,
			auto_resume: false,
			background_tasks: 0,
		});
	});
});

describe("a snoozed thread", () => {
	test("t3_thread and t3_threads show snoozed_until until it is woken", async () => {
		const { d } = await run("say hello");
		const until_ = "2030-01-02T03:04:05.000Z";
		stack.sim("demo").snoozeThread(d.thread_id, until_);
		const row = async () =>
			(
				await callTool<Listed>(client, "t3_threads", { machine: "demo" })
			).data.threads.find((t) => t.thread_id === d.thread_id);
		await until(async () => (await row())?.snoozed_until === until_);
		const r = await callTool<Read>(client, "t3_thread", {
			thread_id: d.thread_id,
		});
		expect(r.data.snoozed_until).toBe(until_);
		stack.sim("demo").snoozeThread(d.thread_id, null);
		await until(async () => (await row())?.snoozed_until === null);
		const after = await callTool<Read>(client, "t3_thread", {
			thread_id: d.thread_id,
		});
		expect(after.data.snoozed_until).toBeNull();
	});
});
