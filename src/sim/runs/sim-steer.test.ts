/**
 * The simulator's 0.1.x delivery and request behaviour over its wire: `deliveryIntent` resolved
 * (and dropped by the pre-release engine), the restart-only `restartsteer` provider, and the
 * requests `runtime-request.respond` cannot answer, each refusal's text.
 */
import { afterEach, describe, expect, it } from "bun:test";
import {
	dispatchCommand,
	dispatchPayload,
	type Frame,
	launchPayload,
	type RawClient,
	startSimWithClient,
	until,
} from "../test-client.ts";
import type { Sim, SimOptions } from "../types.ts";

let sim: Sim;
let c: RawClient;
let projectId: string;
async function useSim(options: SimOptions = {}): Promise<void> {
	({
		sim,
		projectId,
		client: c,
	} = await startSimWithClient({
		stepMs: 2,
		coalesceMs: 2,
		...options,
	}));
}
afterEach(async () => {
	c.close();
	await sim.stop();
});

const RESTART_ONLY = { instanceId: "restartsteer", model: "steady" };

async function running(text: string, extra: Record<string, unknown> = {}) {
	const payload = launchPayload(projectId, text, extra);
	const exit = await c.call("orchestration.launchThread", payload);
	expect(exit._tag).toBe("Success");
	const threadId = payload.threadId as string;
	const runId = exit.value.projection.runs[0].id as string;
	const run = () =>
		(sim.projection(threadId) as Frame).runs.find((r: Frame) => r.id === runId);
	await until(() => run()?.status === "running", 3000, "run running");
	return { threadId, runId };
}
const send = (threadId: string, extra: Record<string, unknown>) =>
	c.call(
		"orchestration.dispatchCommand",
		dispatchPayload(threadId, "more", extra),
	);
const failure = (exit: Frame) => exit.cause[0].error?.message ?? exit.cause[0];

describe("restartsteer: a provider that steers only by restart", () => {
	it("refuses steer_active and queued start_immediately; restart_active and queue_after_active work", async () => {
		await useSim();
		const { threadId, runId } = await running("long task", {
			modelSelection: RESTART_ONLY,
		});
		const steer = await send(threadId, {
			dispatchMode: { type: "steer_active", targetRunId: runId },
		});
		expect(failure(steer)).toBe(
			"Provider restartsteer does not support steering an active turn; it steers only by interrupt and restart (restart_active).",
		);
		const start = await send(threadId, {});
		expect(failure(start)).toBe(
			"Provider restartsteer does not accept queued messages while a run is active; send the message with queue_after_active to queue it on the server.",
		);
		const queued = await send(threadId, {
			dispatchMode: { type: "queue_after_active" },
		});
		expect(queued._tag).toBe("Success");
		const restart = await send(threadId, {
			dispatchMode: { type: "restart_active", targetRunId: runId },
		});
		expect(restart._tag).toBe("Success");
		const session = (sim.projection(threadId) as Frame).providerSessions[0];
		expect(session.capabilities.turns).toMatchObject({
			supportsActiveSteering: false,
			supportsSteeringByInterruptRestart: true,
			supportsQueuedMessages: false,
		});
	});
});

describe("deliveryIntent", () => {
	it("is resolved against the thread: steer on restartsteer restarts the running run", async () => {
		await useSim();
		const { threadId, runId } = await running("long task", {
			modelSelection: RESTART_ONLY,
		});
		expect((await send(threadId, { deliveryIntent: "steer" }))._tag).toBe(
			"Success",
		);
		const attempts = (sim.projection(threadId) as Frame).attempts.filter(
			(a: Frame) => a.runId === runId,
		);
		expect(attempts.map((a: Frame) => a.reason ?? null).at(-1)).toBe(
			"steering_restart",
		);
	});

	it("an invalid value dies while decoding, naming the field; the pre-release engine drops it", async () => {
		await useSim();
		const probe = await send("no-such-thread", {
			deliveryIntent: "t3code-mcp-probe",
		});
		expect(probe.cause[0]).toEqual({
			_tag: "Die",
			defect:
				'Expected "auto" | "steer" | "restart", got "t3code-mcp-probe"\n  at ["deliveryIntent"]',
		});
		c.close();
		await sim.stop();
		await useSim({ compat: "prerelease" });
		const dropped = await send("no-such-thread", {
			deliveryIntent: "t3code-mcp-probe",
		});
		expect(failure(dropped)).toBe(
			"Failed to load orchestration projection for thread no-such-thread.",
		);
		// …and on a busy thread a steer intent does nothing: start_immediately queues it.
		const { threadId } = await running("long task");
		expect((await send(threadId, { deliveryIntent: "steer" }))._tag).toBe(
			"Success",
		);
		expect(
			(sim.projection(threadId) as Frame).runs.map((r: Frame) => r.status),
		).toEqual(["running", "queued"]);
	});
});

describe("requests respond cannot answer", () => {
	const requestOf = (threadId: string) =>
		(sim.projection(threadId) as Frame).runtimeRequests.find(
			(r: Frame) => r.status === "pending",
		);
	for (const [prompt, text] of [
		[
			"sign in again",
			"(auth_refresh) cannot be answered with runtime-request.respond.",
		],
		[
			"call a client tool",
			"(dynamic_tool_call) cannot be answered with runtime-request.respond.",
		],
		[
			"approve after restart",
			"cannot be resumed: the provider process that asked ended with a server restart.",
		],
		[
			"call a client tool after restart",
			"cannot be resumed: the provider process that asked ended with a server restart.",
		],
	] as const) {
		it(`${prompt}: refused, and resolved by finishRun`, async () => {
			await useSim();
			const payload = launchPayload(projectId, prompt);
			await c.call("orchestration.launchThread", payload);
			const threadId = payload.threadId as string;
			await until(() => requestOf(threadId) !== undefined, 3000, "request");
			const request = requestOf(threadId);
			const refused = await dispatchCommand(
				c,
				"runtime-request.respond",
				threadId,
				{ requestId: request.id, decision: "accept" },
			);
			expect(failure(refused)).toBe(`Runtime request ${request.id} ${text}`);
			sim.finishRun(threadId);
			await until(
				() =>
					(sim.projection(threadId) as Frame).runs[0].status === "completed",
				3000,
				"run completed",
			);
		});
	}

	it("approve with options: a decision not offered is refused", async () => {
		await useSim();
		const payload = launchPayload(projectId, "approve with options", {
			runtimeMode: "approval-required",
		});
		await c.call("orchestration.launchThread", payload);
		const threadId = payload.threadId as string;
		await until(() => requestOf(threadId) !== undefined, 3000, "request");
		const request = requestOf(threadId);
		const item = (sim.projection(threadId) as Frame).turnItems.find(
			(i: Frame) => i.requestId === request.id,
		);
		expect(item.options.map((o: Frame) => o.decision)).toEqual([
			"accept",
			"acceptForSession",
			"decline",
		]);
		expect(item.options[0].warning).toContain("prompt injection");
		const refused = await dispatchCommand(
			c,
			"runtime-request.respond",
			threadId,
			{ requestId: request.id, decision: "acceptAlways" },
		);
		expect(failure(refused)).toBe(
			`Decision acceptAlways is not offered for runtime request ${request.id}.`,
		);
	});
});
