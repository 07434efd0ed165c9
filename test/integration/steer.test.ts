/**
 * Steer and queue on every provider, end to end (official MCP client → server → simulator over
 * real sockets): where the server takes `deliveryIntent` the server resolves steer/restart. Its
 * descriptor says so first (`capabilities.serverResolvedCommandContext`, the flag T3's clients
 * read): true → sent without probing, false → never sent; only a descriptor without the flag is
 * probed. On the pre-release engine (`compat: "prerelease"`, no flag, drops the field silently)
 * the connector sends the explicit modes, restart_active where the thread's provider steers only
 * by restart (`restartsteer/steady`); `mode: "queue"` queues with `queue_after_active`;
 * `delivered_as` says what T3 did.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	callTool,
	type Stack,
	startStack,
	untilRunning,
} from "../helpers/stack.ts";

type Dispatched = {
	thread_id: string;
	run_id: string | null;
	queued: boolean;
	delivered_as: string;
};
type Waited = { outcome: string; run_id: string | null; message: string };
type Payload = Record<string, unknown>;
const MACHINES = ["demo", "old", "unflagged", "declined"];

let stack: Stack;
let client: Client;
beforeAll(async () => {
	stack = await startStack({
		machines: [
			{ name: "demo" },
			{ name: "old", sim: { compat: "prerelease" } },
			{ name: "unflagged", sim: { serverResolvedCommandContext: "absent" } },
			{ name: "declined", sim: { serverResolvedCommandContext: false } },
		],
	});
	client = await stack.client();
	for (const name of MACHINES) stack.sim(name).record(true);
});
afterAll(async () => {
	await stack.stop();
});

/** The message.dispatch commands a sim received, oldest first. */
function dispatched(machine: string): Payload[] {
	return stack
		.sim(machine)
		.frames()
		.filter((f) => f.dir === "recv")
		.flatMap((f) => (Array.isArray(f.frame) ? f.frame : [f.frame]) as Payload[])
		.filter(
			(m) =>
				m._tag === "Request" &&
				m.tag === "orchestration.dispatchCommand" &&
				(m.payload as Payload)?.type === "message.dispatch",
		)
		.map((m) => m.payload as Payload);
}
const probes = (machine: string) =>
	dispatched(machine).filter((p) => p.deliveryIntent === "t3code-mcp-probe");
const last = (machine: string, threadId: string) =>
	dispatched(machine)
		.filter((p) => p.threadId === threadId)
		.at(-1);

async function start(machine: string, prompt: string, model?: string) {
	const d = await callTool<Dispatched>(client, "t3_dispatch", {
		machine,
		project: "demo",
		prompt,
		...(model ? { model } : {}),
	});
	expect(d.isError).toBe(false);
	expect(d.data.delivered_as).toBe("started");
	return d.data;
}
async function follow(threadId: string, prompt: string, mode?: string) {
	const f = await callTool<Dispatched>(client, "t3_dispatch", {
		thread_id: threadId,
		prompt,
		...(mode ? { mode } : {}),
	});
	expect(f.isError).toBe(false);
	return f.data;
}
const wait = async (thread_id: string) =>
	(await callTool<Waited>(client, "t3_wait", { thread_id, timeout: 20 })).data;

describe("a server whose descriptor says it takes deliveryIntent", () => {
	test("steer on a provider that steers only by restart: the server restarts the run", async () => {
		const d = await start("demo", "long task", "restartsteer/steady");
		await untilRunning(client, d.thread_id);
		const s = await follow(d.thread_id, "say hi instead", "steer");
		expect([s.run_id, s.queued, s.delivered_as]).toEqual([
			d.run_id,
			false,
			"restarted",
		]);
		const sent = last("demo", d.thread_id);
		expect([sent?.deliveryIntent, sent?.dispatchMode]).toEqual([
			"steer",
			{ type: "start_immediately" },
		]);
		const w = await wait(d.thread_id);
		expect([w.outcome, w.run_id]).toEqual(["completed", d.run_id]);
		expect(w.message).toContain("You said: say hi instead");
		// The descriptor's flag decided: nothing was probed.
		expect(probes("demo")).toEqual([]);
	});

	test("steer where the provider steers live: steered into the running run", async () => {
		const d = await start("demo", "long task");
		await untilRunning(client, d.thread_id);
		const s = await follow(d.thread_id, "also add tests", "steer");
		expect([s.run_id, s.delivered_as]).toEqual([d.run_id, "steered"]);
		stack.sim("demo").finishRun(d.thread_id);
		expect((await wait(d.thread_id)).message).toContain("also add tests");
		expect(last("demo", d.thread_id)?.deliveryIntent).toBe("steer");
		expect(probes("demo")).toEqual([]);
	});

	test("restart: deliveryIntent restart, the server restarts the run", async () => {
		const d = await start("demo", "long task");
		await untilRunning(client, d.thread_id);
		const r = await follow(d.thread_id, "say hi instead", "restart");
		expect([r.run_id, r.delivered_as]).toEqual([d.run_id, "restarted"]);
		const sent = last("demo", d.thread_id);
		expect([sent?.deliveryIntent, sent?.dispatchMode]).toEqual([
			"restart",
			{ type: "start_immediately" },
		]);
		expect((await wait(d.thread_id)).message).toContain(
			"You said: say hi instead",
		);
		expect(probes("demo")).toEqual([]);
	});
});

describe("a descriptor without the flag: the probe decides, as before", () => {
	test("the probe goes out once and its answer names deliveryIntent: steer goes to the server", async () => {
		const d = await start("unflagged", "long task", "restartsteer/steady");
		await untilRunning(client, d.thread_id);
		const s = await follow(d.thread_id, "say hi instead", "steer");
		expect([s.run_id, s.delivered_as]).toEqual([d.run_id, "restarted"]);
		const sent = last("unflagged", d.thread_id);
		expect([sent?.deliveryIntent, sent?.dispatchMode]).toEqual([
			"steer",
			{ type: "start_immediately" },
		]);
		expect((await wait(d.thread_id)).outcome).toBe("completed");
		expect(probes("unflagged")).toHaveLength(1);
		expect(String(probes("unflagged")[0]?.threadId)).toStartWith(
			"t3code-mcp-probe-",
		);
	});
});

describe("a descriptor whose flag is false", () => {
	test("deliveryIntent is never sent nor probed: steer_active, or restart_active where the session steers only by restart", async () => {
		const live = await start("declined", "long task");
		await untilRunning(client, live.thread_id);
		const s = await follow(live.thread_id, "also add docs", "steer");
		expect(s.delivered_as).toBe("steered");
		expect(last("declined", live.thread_id)).toMatchObject({
			dispatchMode: { type: "steer_active", targetRunId: live.run_id },
		});
		stack.sim("declined").finishRun(live.thread_id);
		expect((await wait(live.thread_id)).message).toContain("also add docs");

		const restart = await start("declined", "long task", "restartsteer/steady");
		await untilRunning(client, restart.thread_id);
		const r = await follow(restart.thread_id, "say hi instead", "steer");
		expect(r.delivered_as).toBe("restarted");
		expect(last("declined", restart.thread_id)?.dispatchMode).toEqual({
			type: "restart_active",
			targetRunId: restart.run_id,
		});
		expect((await wait(restart.thread_id)).outcome).toBe("completed");
		expect(
			dispatched("declined").filter((p) => p.deliveryIntent !== undefined),
		).toEqual([]);
	});
});

describe("the pre-release engine (no deliveryIntent)", () => {
	test("steer: steer_active where the session steers live", async () => {
		const d = await start("old", "long task");
		await untilRunning(client, d.thread_id);
		const s = await follow(d.thread_id, "also add docs", "steer");
		expect([s.run_id, s.delivered_as]).toEqual([d.run_id, "steered"]);
		const sent = last("old", d.thread_id);
		expect(sent?.deliveryIntent).toBeUndefined();
		expect(sent?.dispatchMode).toEqual({
			type: "steer_active",
			targetRunId: d.run_id,
		});
		stack.sim("old").finishRun(d.thread_id);
		expect((await wait(d.thread_id)).message).toContain("also add docs");
		// The probe's answer (the missing thread, not the field) said: no deliveryIntent here.
		expect(probes("old")).toHaveLength(1);
	});

	test("steer on a restart-only provider: restart_active, as its session reports", async () => {
		const d = await start("old", "long task", "restartsteer/steady");
		await untilRunning(client, d.thread_id);
		const s = await follow(d.thread_id, "say hi instead", "steer");
		expect([s.run_id, s.delivered_as]).toEqual([d.run_id, "restarted"]);
		expect(last("old", d.thread_id)?.dispatchMode).toEqual({
			type: "restart_active",
			targetRunId: d.run_id,
		});
		expect((await wait(d.thread_id)).message).toContain(
			"You said: say hi instead",
		);
		expect(probes("old")).toHaveLength(1);
		// t3_models on the pre-release engine, after its sessions were read: the same answer.
		const listed = await callTool<{
			models: { model: string; steer: string }[];
		}>(client, "t3_models", { machine: "old" });
		const steer = new Map(listed.data.models.map((m) => [m.model, m.steer]));
		expect([
			steer.get("restartsteer/steady"),
			steer.get("codex/gpt-5.6-sol"),
		]).toEqual(["restart", "live"]);
	});
});

describe("queue", () => {
	for (const machine of ["demo", "old"]) {
		test(`${machine}: a follow-up to a busy thread queues with queue_after_active, even where the provider takes no queued messages`, async () => {
			const d = await start(machine, "long task", "restartsteer/steady");
			await untilRunning(client, d.thread_id);
			for (const mode of ["queue", undefined]) {
				const q = await follow(d.thread_id, "say hi", mode);
				expect([q.queued, q.delivered_as]).toEqual([true, "queued"]);
				expect(last(machine, d.thread_id)?.dispatchMode).toEqual({
					type: "queue_after_active",
				});
			}
			stack.sim(machine).finishRun(d.thread_id);
			expect((await wait(d.thread_id)).outcome).toBe("completed");
		});
	}

	test("on an idle thread every mode starts a run (start_immediately), with no probe", async () => {
		const before = probes("demo").length;
		const d = await start("demo", "say hi");
		expect((await wait(d.thread_id)).outcome).toBe("completed");
		for (const mode of ["queue", "steer", "restart"]) {
			const f = await follow(d.thread_id, `${mode} when idle`, mode);
			expect([f.queued, f.delivered_as]).toEqual([false, "started"]);
			expect(last("demo", d.thread_id)?.dispatchMode).toEqual({
				type: "start_immediately",
			});
			expect((await wait(d.thread_id)).outcome).toBe("completed");
		}
		expect(probes("demo")).toHaveLength(before);
	});
});
