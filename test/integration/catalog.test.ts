/**
 * ModelsResult, run settings, steering and dismissal end to end: the official MCP client → our
 * server → the protocol-2 simulator over real sockets. What reaches T3 is asserted on the
 * frames the simulator received.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import type { Sim } from "../../src/sim/index.ts";
import type { ModelsResult } from "../../src/threads/dispatch/model-catalog.ts";
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
	untilMachinesOnline,
	untilRunning,
} from "../helpers/stack.ts";

type Dispatched = {
	thread_id: string;
	run_id: string | null;
	run_status: string;
	queued: boolean;
	runtime_mode: string;
	delivered_as: string;
};
type Waited = {
	outcome: string;
	run_id: string | null;
	message: string | null;
	question: { request_id: string; dismissable: boolean } | null;
};

let stack: Stack;
let sim: Sim;
let client: Client;
let receiver: Receiver;
beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		machines: [{ name: "demo", sim: { stepMs: 5 } }],
		server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
	});
	sim = stack.sim();
	sim.record(true);
	client = await stack.client();
	await untilMachinesOnline(client);
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

type Request = { tag: string; payload: Record<string, unknown> };
/** The RPC requests the sim received with this tag (and command type), oldest first. */
function received(tag: string, type?: string): Record<string, unknown>[] {
	return sim
		.frames()
		.filter((f) => f.dir === "recv")
		.flatMap((f) => (Array.isArray(f.frame) ? f.frame : [f.frame]) as Request[])
		.filter(
			(m) =>
				(m as { _tag?: string })._tag === "Request" &&
				m.tag === tag &&
				(type === undefined || m.payload?.type === type),
		)
		.map((m) => m.payload);
}
const forThread = (payloads: Record<string, unknown>[], threadId: string) =>
	payloads.filter((p) => p.threadId === threadId);

const models = async () =>
	(await callTool<ModelsResult>(client, "t3_models", { machine: "demo" })).data;
const dispatch = (args: Record<string, unknown>) =>
	callTool<Dispatched>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		...args,
	});
const wait = async (threadId: string) =>
	(
		await callTool<Waited>(client, "t3_wait", {
			thread_id: threadId,
			timeout: 20,
		})
	).data;
const simThread = (threadId: string) =>
	(sim.projection(threadId) as { thread: Record<string, unknown> }).thread;

describe("t3_models", () => {
	test("every model as the exact string t3_dispatch takes, with readiness, plan mode and options", async () => {
		const data = await models();
		expect(data.machine).toBe("demo");
		expect(data.default_model).toBe("claudeAgent/claude-opus-5");
		const byName = new Map(data.models.map((m) => [m.model, m]));
		expect([...byName.keys()]).toEqual([
			"claudeAgent/claude-opus-5",
			"claudeAgent/claude-sonnet-5",
			"claudeAgent/claude-haiku-4-5",
			"codex/gpt-5.6-sol",
			"codex/gpt-5.6-luna",
			"grok/grok-build",
			"restartsteer/steady",
			"opencode/openrouter/qwen3-coder",
		]);
		expect(byName.get("codex/gpt-5.6-sol")).toEqual({
			model: "codex/gpt-5.6-sol",
			provider: "codex",
			name: "GPT-5.6 Sol",
			ready: true,
			reason: null,
			plan_mode: true,
			steer: "live",
			options: [
				{
					id: "reasoningEffort",
					label: "Reasoning",
					type: "select",
					values: ["low", "medium", "high", "xhigh"],
					default: "medium",
				},
				{
					id: "fastMode",
					label: "Fast Mode",
					type: "boolean",
					values: [],
					default: null,
				},
			],
		});
		const opencode = byName.get("opencode/openrouter/qwen3-coder");
		expect(opencode?.ready).toBe(false);
		expect(opencode?.reason).toContain("not authenticated");
		expect(opencode?.reason).toContain("opencode auth login");
		expect(byName.get("grok/grok-build")?.plan_mode).toBe(false);
		// The grok driver steers only by interrupt-and-restart (T3's Grok capabilities).
		expect(byName.get("restartsteer/steady")?.steer).toBe("restart");
	});

	test("a named machine that does not exist is an error naming the configured ones", async () => {
		const r = await callTool(client, "t3_models", { machine: "nope" });
		expect(r.isError).toBe(true);
		expect(r.text).toContain('Unknown machine "nope"');
		expect(r.text).toContain("demo");
	});
});

describe("t3_dispatch model, options and modes", () => {
	test("a valid option replaces the configured ones and reaches T3 with the modes", async () => {
		const d = await dispatch({
			// Streams a reply, no command or edit: nothing waits for an approval.
			prompt: "say hi slowly",
			model: "codex/gpt-5.6-sol",
			options: { reasoningEffort: "high", fastMode: true },
			runtime_mode: "approval-required",
			interaction_mode: "plan",
		});
		expect(d.isError).toBe(false);
		expect(d.data.runtime_mode).toBe("approval-required");
		const [launch] = forThread(
			received("orchestration.launchThread"),
			d.data.thread_id,
		);
		expect(launch?.modelSelection).toEqual({
			instanceId: "codex",
			model: "gpt-5.6-sol",
			options: [
				{ id: "reasoningEffort", value: "high" },
				{ id: "fastMode", value: true },
			],
		});
		expect([launch?.runtimeMode, launch?.interactionMode]).toEqual([
			"approval-required",
			"plan",
		]);
		expect((await wait(d.data.thread_id)).outcome).toBe("completed");

		// A follow-up changing both modes sends the thread settings before its message.
		const f = await dispatch({
			thread_id: d.data.thread_id,
			prompt: "again",
			runtime_mode: "auto-accept-edits",
			interaction_mode: "default",
		});
		expect(f.data.runtime_mode).toBe("auto-accept-edits");
		const sent = forThread(
			received("orchestration.dispatchCommand"),
			d.data.thread_id,
		).map((p) => p.type);
		expect(sent).toEqual([
			"thread.runtime-mode.set",
			"thread.interaction-mode.set",
			"message.dispatch",
		]);
		expect([
			simThread(d.data.thread_id).runtimeMode,
			simThread(d.data.thread_id).interactionMode,
		]).toEqual(["auto-accept-edits", "default"]);
	});

	test("an unknown option id or value is refused, listing the valid ones", async () => {
		const before = received("orchestration.launchThread").length;
		const id = await dispatch({
			prompt: "x",
			model: "codex/gpt-5.6-sol",
			options: { effort: "high" },
		});
		expect(id.isError).toBe(true);
		expect(id.text).toContain('unknown option "effort"');
		expect(id.text).toContain(
			"reasoningEffort (one of low, medium, high, xhigh)",
		);
		expect(id.text).toContain("fastMode (true or false)");
		const value = await dispatch({
			prompt: "x",
			options: { effort: "ludicrous" },
		});
		expect(value.isError).toBe(true);
		// Without model: checked against the machine's model, claudeAgent/claude-opus-5.
		expect(value.text).toContain(
			'options.effort: "ludicrous" is not valid for model "claudeAgent/claude-opus-5"',
		);
		const type = await dispatch({
			prompt: "x",
			model: "codex/gpt-5.6-sol",
			options: { fastMode: "yes" },
		});
		expect(type.text).toContain("options.fastMode: expects true or false");
		expect(received("orchestration.launchThread").length).toBe(before);
	});

	test("a provider that is not ready, and plan mode where it is not offered, are refused with why", async () => {
		const notReady = await dispatch({
			prompt: "x",
			model: "opencode/openrouter/qwen3-coder",
		});
		expect(notReady.isError).toBe(true);
		expect(notReady.text).toContain(
			'model: "opencode/openrouter/qwen3-coder" cannot run on machine "demo" now',
		);
		expect(notReady.text).toContain("not authenticated");
		const plan = await dispatch({
			prompt: "x",
			model: "grok/grok-build",
			interaction_mode: "plan",
		});
		expect(plan.isError).toBe(true);
		expect(plan.text).toContain(
			'provider "grok" on machine "demo" does not offer plan mode',
		);
		// An unknown model on a disabled provider: both problems, not only the first.
		const both = await dispatch({ prompt: "x", model: "cursor/composer-9" });
		expect(both.isError).toBe(true);
		expect(both.text).toContain(
			'model: "cursor/composer-9" cannot run on machine "demo" now: cursor is disabled on the machine: Cursor is disabled in T3 Code settings, and "composer-9" is not one of its models (none)',
		);
		const unknown = await dispatch({ prompt: "x", model: "gemini/pro" });
		expect(unknown.text).toContain(
			'provider instance "gemini" does not exist on machine "demo"',
		);
		// Grok without plan mode runs.
		const grok = await dispatch({ prompt: "say hi", model: "grok/grok-build" });
		expect(grok.isError).toBe(false);
	});

	test("a model the provider does not offer, or a malformed one, is refused pointing at the exact strings", async () => {
		const before = received("orchestration.launchThread").length;
		const offered = (await models()).models
			.filter((m) => m.provider === "codex")
			.map((m) => m.model);
		const unknown = await dispatch({ prompt: "x", model: "codex/gpt-9" });
		expect(unknown.isError).toBe(true);
		expect(unknown.text).toContain(
			'model: "codex/gpt-9" is not offered on machine "demo"',
		);
		// Listed as t3_dispatch takes them, so the model can copy one.
		expect(unknown.text).toContain(offered.join(", "));
		const malformed = await dispatch({ prompt: "x", model: "codex" });
		expect(malformed.isError).toBe(true);
		expect(malformed.text).toContain('got "codex"');
		expect(malformed.text).toContain("t3_models");
		expect(received("orchestration.launchThread")).toHaveLength(before);
	});

	test("a continuation keeps an approval-required thread approval-required", async () => {
		const d = await dispatch({
			prompt: "say hi slowly",
			runtime_mode: "approval-required",
		});
		expect((await wait(d.data.thread_id)).outcome).toBe("completed");
		const f = await dispatch({ thread_id: d.data.thread_id, prompt: "more" });
		expect(f.isError).toBe(false);
		expect(f.data.runtime_mode).toBe("approval-required");
		expect(
			forThread(
				received("orchestration.dispatchCommand", "thread.runtime-mode.set"),
				d.data.thread_id,
			),
		).toEqual([]);
		expect(simThread(d.data.thread_id).runtimeMode).toBe("approval-required");
		// Options on a continuation are checked against the thread's model and sent with it.
		const o = await dispatch({
			thread_id: d.data.thread_id,
			prompt: "faster",
			options: { fastMode: true },
		});
		expect(o.isError).toBe(false);
		const last = forThread(
			received("orchestration.dispatchCommand", "message.dispatch"),
			d.data.thread_id,
		).at(-1);
		expect(last?.modelSelection).toEqual({
			instanceId: "claudeAgent",
			model: "claude-opus-5",
			options: [{ id: "fastMode", value: true }],
		});
	});
});

describe("t3_dispatch mode: steer and restart", () => {
	test("steer joins the running run", async () => {
		const d = await dispatch({ prompt: "long task" });
		await untilRunning(client, d.data.thread_id);
		const s = await dispatch({
			thread_id: d.data.thread_id,
			prompt: "also add tests",
			mode: "steer",
		});
		expect(s.isError).toBe(false);
		expect([s.data.run_id, s.data.queued, s.data.delivered_as]).toEqual([
			d.data.run_id,
			false,
			"steered",
		]);
		const message = forThread(
			received("orchestration.dispatchCommand", "message.dispatch"),
			d.data.thread_id,
		).at(-1);
		// This server takes deliveryIntent (its answer to the probe said so): it resolves the steer.
		expect([message?.deliveryIntent, message?.dispatchMode]).toEqual([
			"steer",
			{ type: "start_immediately" },
		]);
		sim.finishRun(d.data.thread_id);
		const w = await wait(d.data.thread_id);
		expect([w.outcome, w.run_id]).toEqual(["completed", d.data.run_id]);
		expect(w.message).toContain("also add tests");
	});

	test("restart interrupts the running run and starts it again with the new message", async () => {
		const d = await dispatch({ prompt: "long task" });
		await untilRunning(client, d.data.thread_id);
		const r = await dispatch({
			thread_id: d.data.thread_id,
			prompt: "say hi instead",
			mode: "restart",
		});
		expect([r.data.run_id, r.data.queued, r.data.delivered_as]).toEqual([
			d.data.run_id,
			false,
			"restarted",
		]);
		const message = forThread(
			received("orchestration.dispatchCommand", "message.dispatch"),
			d.data.thread_id,
		).at(-1);
		expect([message?.deliveryIntent, message?.dispatchMode]).toEqual([
			"restart",
			{ type: "start_immediately" },
		]);
		const w = await wait(d.data.thread_id);
		expect([w.outcome, w.run_id]).toEqual(["completed", d.data.run_id]);
		expect(w.message).toContain("You said: say hi instead");
	});

	test("on an idle thread steer and restart simply start a run", async () => {
		const d = await dispatch({ prompt: "say hi" });
		expect((await wait(d.data.thread_id)).outcome).toBe("completed");
		for (const mode of ["steer", "restart"]) {
			const f = await dispatch({
				thread_id: d.data.thread_id,
				prompt: `${mode} when idle`,
				mode,
			});
			expect(f.isError).toBe(false);
			expect(f.data.run_id).not.toBe(d.data.run_id);
			expect(f.data.queued).toBe(false);
			const w = await wait(d.data.thread_id);
			expect([w.outcome, w.run_id]).toEqual(["completed", f.data.run_id]);
		}
		const modes = forThread(
			received("orchestration.dispatchCommand", "message.dispatch"),
			d.data.thread_id,
		).map((p) => p.dispatchMode);
		expect(modes).toEqual([
			{ type: "start_immediately" },
			{ type: "start_immediately" },
		]);
	});
});

describe("t3_answer request_id and dismiss", () => {
	test("a dismissable question is dismissed; a stale request_id is refused", async () => {
		const d = await dispatch({ prompt: "ask me optionally" });
		const q = await wait(d.data.thread_id);
		expect(q.outcome).toBe("question");
		expect(q.question?.dismissable).toBe(true);
		const requestId = q.question?.request_id as string;
		// The webhook's question says so too.
		const event = () =>
			receiver.deliveries.find(
				(e) =>
					e.body.thread_id === d.data.thread_id &&
					e.body.type === "thread.question",
			);
		await until(() => event() !== undefined, 10_000, "the question event");
		expect(
			(event()?.body.question as { dismissable?: boolean } | undefined)
				?.dismissable,
		).toBe(true);
		const a = await callTool(client, "t3_answer", {
			thread_id: d.data.thread_id,
			request_id: requestId,
			dismiss: true,
		});
		expect(a.isError).toBe(false);
		expect(a.data).toEqual({
			thread_id: d.data.thread_id,
			request_id: requestId,
			status: "dismissed",
			custom: [],
		});
		expect(
			received("orchestration.dispatchCommand", "thread.user-input.dismiss").at(
				-1,
			)?.requestId,
		).toBe(requestId);
		const w = await wait(d.data.thread_id);
		expect(w.outcome).toBe("completed");
		expect(w.message).toContain("No answer given");
		const stale = await callTool(client, "t3_answer", {
			thread_id: d.data.thread_id,
			request_id: requestId,
			answers: { color: "Red" },
		});
		expect(stale.isError).toBe(true);
		expect(stale.text).toContain(`request ${requestId} is no longer pending`);
	});

	test("a question T3 does not let us dismiss is an error saying to answer or interrupt", async () => {
		const d = await dispatch({ prompt: "ask me" });
		const q = await wait(d.data.thread_id);
		expect(q.question?.dismissable).toBe(false);
		const a = await callTool(client, "t3_answer", {
			thread_id: d.data.thread_id,
			dismiss: true,
		});
		expect(a.isError).toBe(true);
		expect(a.text).toContain("does not allow dismissing");
		expect(a.text).toContain("t3_interrupt");
		// Still pending and answerable, by its request_id.
		const ok = await callTool(client, "t3_answer", {
			thread_id: d.data.thread_id,
			request_id: q.question?.request_id,
			answers: { color: "Red" },
		});
		expect(ok.isError).toBe(false);
		expect((await wait(d.data.thread_id)).outcome).toBe("completed");
	});
});

describe("catalog refresh", () => {
	// While the machine reconnects t3_models is an error (no models): undefined then.
	const opencode = async () =>
		(await models()).models?.find((m) => m.provider === "opencode");
	const grok = async () =>
		(await models()).models?.find((m) => m.provider === "grok");

	test("a config change T3 announces refreshes the catalog", async () => {
		expect((await grok())?.plan_mode).toBe(false);
		sim.setProvider("grok", { showInteractionModeToggle: true });
		await until(
			async () => (await grok())?.plan_mode === true,
			10_000,
			"grok plan mode after the config change",
		);
		sim.setProvider("grok", { showInteractionModeToggle: false });
		await until(async () => (await grok())?.plan_mode === false);
	});

	test("steer is what the provider's sessions report, once a run has used the provider", async () => {
		const steady = async () =>
			(await models()).models?.find((m) => m.model === "restartsteer/steady")
				?.steer;
		// A driver t3code-mcp does not know, and no capabilities on the provider row: a guess.
		sim.setProvider("restartsteer", { driver: "freshdriver" });
		await until(
			async () => (await steady()) === "live",
			10_000,
			"the driver's guess after the config change",
		);
		const d = await dispatch({
			prompt: "say hi",
			model: "restartsteer/steady",
		});
		expect(d.isError).toBe(false);
		expect((await wait(d.data.thread_id)).outcome).toBe("completed");
		// Its session said it steers only by interrupt-and-restart.
		expect(await steady()).toBe("restart");
		// Put back without telling the connector: a notified change makes it re-read the whole
		// catalog later, which raced the next test's unannounced change (it then saw it early).
		sim.setProvider("restartsteer", { driver: "grok" }, { notify: false });
	});

	test("models are read again after a reconnect", async () => {
		expect((await opencode())?.ready).toBe(false);
		// A change T3 does not announce: the cached catalog still says not ready…
		sim.setProvider(
			"opencode",
			{
				status: "ready",
				auth: { status: "authenticated" },
				message: undefined,
			},
			{ notify: false },
		);
		expect((await opencode())?.ready).toBe(false);
		const reads = sim.stats().requests["server.getConfig"] ?? 0;
		// …until the machine reconnects.
		sim.dropSockets();
		await until(
			async () => (await opencode())?.ready === true,
			15_000,
			"opencode ready after the reconnect",
		);
		expect(sim.stats().requests["server.getConfig"]).toBeGreaterThan(reads);
		const d = await dispatch({
			prompt: "say hi",
			model: "opencode/openrouter/qwen3-coder",
		});
		expect(d.isError).toBe(false);
	});
});

describe("t3_models on a machine that is not online", () => {
	test("the error names the machine's state and reason", async () => {
		const down = await startStack({
			machines: [{ name: "down", url: "http://127.0.0.1:9" }],
		});
		try {
			const c = await down.client();
			const r = await callTool(c, "t3_models", { machine: "down" });
			expect(r.isError).toBe(true);
			expect(r.text).toContain('Machine "down" is offline');
			expect(r.text).toContain("127.0.0.1:9");
		} finally {
			await down.stop();
		}
	});
});
