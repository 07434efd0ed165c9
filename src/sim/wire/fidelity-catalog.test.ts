/**
 * Fidelity of the frames behind model discovery, steering and dismissal, checked against
 * PROTOCOL.md's tables (§3 ServerConfig, §9 ServerProvider / option descriptors, §6.3
 * dispatch modes, §6.6 dismiss, §7.3 RunAttempt / RuntimeRequest / user_message) and the
 * upstream `ServerConfigStreamEvent` items of `subscribeServerConfig` (§2.6, §4.4).
 */
import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import {
	dispatchCommand,
	dispatchPayload,
	type Frame,
	launchPayload,
	type RawClient,
	startSimWithClient,
	until,
} from "../test-client.ts";
import type { Sim } from "../types.ts";

let sim: Sim;
let c: RawClient;
let projectId: string;
beforeEach(async () => {
	({
		sim,
		projectId,
		client: c,
	} = await startSimWithClient({ stepMs: 2, coalesceMs: 2 }));
});
afterEach(async () => {
	c.close();
	await sim.stop();
});

const keys = (o: object) => Object.keys(o).sort();
/** Required keys of ServerProvider (§9; upstream contracts/server.ts). */
const PROVIDER_KEYS = [
	"auth",
	"checkedAt",
	"driver",
	"enabled",
	"installed",
	"instanceId",
	"models",
	"status",
	"version",
];
const PROVIDER_STATES = ["ready", "warning", "error", "disabled"];
const AUTH_STATES = ["authenticated", "unauthenticated", "unknown"];

function expectProvider(p: Frame): void {
	for (const key of PROVIDER_KEYS)
		expect(p, `provider key ${key}`).toHaveProperty(key);
	expect(PROVIDER_STATES).toContain(p.status);
	expect(AUTH_STATES).toContain(p.auth.status);
	for (const m of p.models) {
		expect(keys(m)).toEqual(
			expect.arrayContaining(["capabilities", "isCustom", "name", "slug"]),
		);
		for (const d of m.capabilities.optionDescriptors) {
			expect(["select", "boolean"]).toContain(d.type);
			expect(typeof d.id).toBe("string");
			expect(typeof d.label).toBe("string");
			if (d.type === "select") {
				expect(d.options.length).toBeGreaterThan(0);
				for (const o of d.options) expect(typeof o.id).toBe("string");
				// The default choice is marked and is the current value.
				const marked = d.options.filter((o: Frame) => o.isDefault);
				expect(marked.map((o: Frame) => o.id)).toEqual([d.currentValue]);
			}
		}
	}
}

async function launch(
	text: string,
): Promise<{ threadId: string; runId: string }> {
	const payload = launchPayload(projectId, text);
	const result = await c.call("orchestration.launchThread", payload);
	return {
		threadId: payload.threadId,
		runId: result.value.projection.runs[0].id,
	};
}

const projection = (threadId: string) => sim.projection(threadId) as Frame;
const run = (threadId: string, runId: string) =>
	projection(threadId).runs.find((r: Frame) => r.id === runId);
const running = (threadId: string, runId: string) =>
	until(() => run(threadId, runId)?.status === "running", 3000, "running");
const finalText = (threadId: string, runId: string) =>
	projection(threadId)
		.messages.filter((m: Frame) => m.runId === runId && m.role === "assistant")
		.at(-1)?.text;

describe("server.getConfig providers (§3, §9)", () => {
	it("has ServerConfig's keys and faithful providers, models and option descriptors", async () => {
		const config = (await c.call("server.getConfig", {})).value;
		// The keys the real server sent (OBSERVED.md §6.1 4) are all there.
		expect(keys(config)).toEqual(
			expect.arrayContaining([
				"auth",
				"availableEditors",
				"cwd",
				"environment",
				"issues",
				"keybindings",
				"keybindingsConfigPath",
				"observability",
				"providers",
				"settings",
			]),
		);
		for (const p of config.providers) expectProvider(p);
		const byId = new Map(config.providers.map((p: Frame) => [p.instanceId, p]));
		const codex = byId.get("codex") as Frame;
		expect(codex.models.map((m: Frame) => m.slug)).toContain("gpt-5.6-sol");
		const sol = codex.models.find((m: Frame) => m.slug === "gpt-5.6-sol");
		expect(
			sol.capabilities.optionDescriptors.map((d: Frame) => [d.id, d.type]),
		).toEqual([
			["reasoningEffort", "select"],
			["fastMode", "boolean"],
		]);
		const claude = byId.get("claudeAgent") as Frame;
		expect(claude.models.length).toBeGreaterThanOrEqual(2);
		// Installed, but not authenticated; and one without plan mode.
		const opencode = byId.get("opencode") as Frame;
		expect([opencode.installed, opencode.auth.status]).toEqual([
			true,
			"unauthenticated",
		]);
		expect(typeof opencode.message).toBe("string");
		expect((byId.get("grok") as Frame).showInteractionModeToggle).toBe(false);
		expect((byId.get("cursor") as Frame).status).toBe("disabled");
	});

	it("subscribeServerConfig: a snapshot first, then providerStatuses on a change", async () => {
		const stream = c.stream("subscribeServerConfig", {});
		const first = await stream.waitFor(() => true);
		expect(keys(first)).toEqual(["config", "type", "version"]);
		expect([first.version, first.type]).toEqual([1, "snapshot"]);
		expect(first.config.providers.length).toBe(6);
		sim.setProvider(
			"opencode",
			{ auth: { status: "unknown" } },
			{ notify: false },
		);
		sim.setProvider("opencode", {
			status: "ready",
			auth: { status: "authenticated" },
		});
		const change = await stream.waitFor((i) => i.type === "providerStatuses");
		expect(keys(change)).toEqual(["payload", "type", "version"]);
		expect(keys(change.payload)).toEqual(["providers"]);
		for (const p of change.payload.providers) expectProvider(p);
		// The silent change produced no item of its own.
		expect(stream.items.length).toBe(2);
		const config = (await c.call("server.getConfig", {})).value;
		expect(
			config.providers.find((p: Frame) => p.instanceId === "opencode").auth,
		).toEqual({ status: "authenticated" });
	});
});

describe("dispatch modes steer_active / restart_active (§6.3)", () => {
	it("steer_active joins the running run as a steer message", async () => {
		const { threadId, runId } = await launch("long task");
		await running(threadId, runId);
		const steer = dispatchPayload(threadId, "also add tests", {
			dispatchMode: { type: "steer_active", targetRunId: runId },
		});
		const result = await c.call("orchestration.dispatchCommand", steer);
		expect(keys(result.value)).toEqual(["sequence"]);
		const p = projection(threadId);
		expect(p.runs.length).toBe(1);
		const message = p.messages.find((m: Frame) => m.id === steer.messageId);
		expect([message.role, message.runId]).toEqual(["user", runId]);
		const item = p.turnItems.find(
			(i: Frame) => i.messageId === steer.messageId,
		);
		expect([item.type, item.inputIntent, item.runId]).toEqual([
			"user_message",
			"steer",
			runId,
		]);
		sim.finishRun(threadId);
		await until(() => run(threadId, runId).status === "completed");
		expect(finalText(threadId, runId)).toContain("also add tests");
	});

	it("restart_active starts a new attempt of the same run (reason steering_restart)", async () => {
		const { threadId, runId } = await launch("long task");
		await running(threadId, runId);
		const restart = dispatchPayload(threadId, "say hi instead", {
			dispatchMode: { type: "restart_active", targetRunId: runId },
		});
		await c.call("orchestration.dispatchCommand", restart);
		await until(() => run(threadId, runId).status === "completed");
		const p = projection(threadId);
		expect(p.runs.length).toBe(1);
		const attempts = p.attempts.filter((a: Frame) => a.runId === runId);
		expect(
			attempts.map((a: Frame) => [a.attemptOrdinal, a.reason, a.status]),
		).toEqual([
			[1, "initial", "interrupted"],
			[2, "steering_restart", "completed"],
		]);
		// RunAttempt's keys (§7.3).
		expect(keys(attempts[1])).toEqual(
			[
				"attemptOrdinal",
				"completedAt",
				"id",
				"providerInstanceId",
				"providerThreadId",
				"providerTurnId",
				"reason",
				"rootNodeId",
				"runId",
				"startedAt",
				"status",
			].sort(),
		);
		expect(run(threadId, runId).activeAttemptId).toBe(attempts[1].id);
		expect(finalText(threadId, runId)).toContain("say hi instead");
	});

	it("on a finished target: steer becomes a new run, restart is refused", async () => {
		const { threadId, runId } = await launch("say hi");
		await until(() => run(threadId, runId)?.status === "completed");
		const steer = dispatchPayload(threadId, "steer late", {
			dispatchMode: { type: "steer_active", targetRunId: runId },
		});
		await c.call("orchestration.dispatchCommand", steer);
		expect(projection(threadId).runs.at(-1).userMessageId).toBe(
			steer.messageId,
		);
		const restart = await c.call(
			"orchestration.dispatchCommand",
			dispatchPayload(threadId, "restart late", {
				dispatchMode: { type: "restart_active", targetRunId: runId },
			}),
		);
		expect(restart._tag).toBe("Failure");
		expect(restart.cause[0].error.message).toContain("is not active");
	});
});

describe("thread.user-input.dismiss (§6.6)", () => {
	async function question(text: string) {
		const { threadId, runId } = await launch(text);
		const request = await until(
			() =>
				projection(threadId).runtimeRequests.find(
					(r: Frame) => r.status === "pending",
				),
			3000,
			"a pending request",
		);
		return { threadId, runId, request };
	}

	it("closes a message-mode question: request resolved, item cancelled, the run goes on", async () => {
		const { threadId, runId, request } = await question("ask me optionally");
		expect(request.responseCapability).toEqual({ type: "message" });
		const item = projection(threadId).turnItems.find(
			(i: Frame) => i.requestId === request.id,
		);
		expect([item.type, item.responseMode]).toEqual([
			"user_input_request",
			"message",
		]);
		const result = await dispatchCommand(
			c,
			"thread.user-input.dismiss",
			threadId,
			{
				requestId: request.id,
			},
		);
		expect(keys(result.value)).toEqual(["sequence"]);
		const p = projection(threadId);
		expect(
			p.runtimeRequests.find((r: Frame) => r.id === request.id).status,
		).toBe("resolved");
		expect(
			p.turnItems.find((i: Frame) => i.requestId === request.id).status,
		).toBe("cancelled");
		await until(() => run(threadId, runId).status === "completed");
		expect(finalText(threadId, runId)).toContain("No answer given");
	});

	it("refuses a live request", async () => {
		const { threadId, request } = await question("ask me");
		expect(request.responseCapability.type).toBe("live");
		const result = await dispatchCommand(
			c,
			"thread.user-input.dismiss",
			threadId,
			{
				requestId: request.id,
			},
		);
		expect(result.cause[0].error._tag).toBe(
			"OrchestrationV2DispatchCommandError",
		);
		expect(result.cause[0].error.message).toContain("cannot be dismissed");
	});
});
