import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { startSim } from "../sim.ts";
import {
	connect,
	dispatchPayload,
	firstProjectId,
	launchPayload,
	until,
} from "../test-client.ts";
import type { Sim } from "../types.ts";

let sim: Sim;
beforeEach(async () => {
	sim = await startSim({
		stepMs: 2,
		coalesceMs: 2,
		tokens: [{ token: "reader", scopes: ["orchestration:read"] }],
	});
});
afterEach(() => sim.stop());

describe("sim RPC transport", () => {
	it("answers Ping, Defects garbage and keeps the socket, accepts arrays", async () => {
		const c = await connect(sim);
		c.send("this is not json");
		const defect = await c.waitFrame((f) => f._tag === "Defect");
		expect(defect.defect.name).toBe("SyntaxError");
		c.send([
			{ _tag: "Ping" },
			{
				_tag: "Request",
				id: "7",
				tag: "server.probe",
				payload: {},
				headers: [],
			},
		]);
		await c.waitFrame((f) => f._tag === "Pong");
		const probe = await c.waitFrame(
			(f) => f._tag === "Exit" && f.requestId === "7",
		);
		expect(probe.exit).toEqual({ _tag: "Success", value: {} });
		c.close();
	});

	it("dies on unknown tags, missing keys and negative cursors", async () => {
		const c = await connect(sim);
		expect(await c.call("orchestration.getSnapshot", {})).toEqual({
			_tag: "Failure",
			cause: [
				{
					_tag: "Die",
					defect: "Unknown request tag: orchestration.getSnapshot",
				},
			],
		});
		const { createdBy: _, ...noCreatedBy } = dispatchPayload("thread-x", "hi");
		const missing = await c.call("orchestration.dispatchCommand", noCreatedBy);
		expect(missing.cause[0]).toEqual({
			_tag: "Die",
			defect: 'Missing key\n  at ["createdBy"]',
		});
		const negative = await c
			.stream("orchestration.subscribeShell", { afterSequence: -1 })
			.exit();
		expect(negative.cause[0].defect).toBe(
			'Expected a value greater than or equal to 0, got -1\n  at ["afterSequence"]',
		);
		const unknownType = await c.call("orchestration.dispatchCommand", {
			type: "thread.turn.start",
			commandId: "c",
		});
		expect(unknownType.cause[0].defect).toStartWith(
			'Expected { readonly "type": "thread.create"',
		);
		c.close();
	});

	it("fails typed errors for unknown threads, runs and requests", async () => {
		const c = await connect(sim);
		const unknownThread = await c.call(
			"orchestration.dispatchCommand",
			dispatchPayload("thread-nope", "hi"),
		);
		expect(unknownThread.cause[0].error).toMatchObject({
			_tag: "OrchestrationV2DispatchCommandError",
			commandType: "message.dispatch",
			message:
				"Failed to load orchestration projection for thread thread-nope.",
		});
		const launch = launchPayload(await firstProjectId(sim), "hello");
		await c.call("orchestration.launchThread", launch);
		const interrupt = await c.call("orchestration.dispatchCommand", {
			type: "run.interrupt",
			commandId: crypto.randomUUID(),
			threadId: launch.threadId,
			runId: "run:does-not-exist",
		});
		expect(interrupt.cause[0].error.message).toBe(
			"Run run:does-not-exist is not interruptible.",
		);
		const respond = await c.call("orchestration.dispatchCommand", {
			type: "runtime-request.respond",
			commandId: crypto.randomUUID(),
			threadId: launch.threadId,
			requestId: "request-does-not-exist",
			answers: {},
		});
		expect(respond.cause[0].error.message).toBe(
			"Runtime request request-does-not-exist was not found.",
		);
		const badProject = await c.call(
			"orchestration.launchThread",
			launchPayload("project-nope", "hi"),
		);
		expect(badProject.cause[0].error._tag).toBe(
			"OrchestrationV2ThreadLaunchError",
		);
		const projection = await c.call("orchestration.getThreadProjection", {
			threadId: "thread-nope",
		});
		expect(projection.cause[0].error._tag).toBe(
			"OrchestrationV2GetThreadProjectionError",
		);
		c.close();
	});

	it("refuses operate RPCs to a read-only token", async () => {
		const c = await connect(sim, { token: "reader" });
		const exit = await c.call(
			"orchestration.dispatchCommand",
			dispatchPayload("thread-x", "hi"),
		);
		expect(exit.cause[0]).toEqual({
			_tag: "Fail",
			error: {
				_tag: "EnvironmentAuthorizationError",
				message:
					"The authenticated token is missing required scope: orchestration:operate.",
				requiredScope: "orchestration:operate",
			},
		});
		const launch = await c.call(
			"orchestration.launchThread",
			launchPayload(await firstProjectId(sim), "hi"),
		);
		expect(launch.cause[0].error._tag).toBe("EnvironmentAuthorizationError");
		expect((await c.call("server.probe", {}))._tag).toBe("Success");
		c.close();
	});

	it("holds the next Chunk of a stream until the client Acks", async () => {
		const c = await connect(sim);
		const shell = c.stream(
			"orchestration.subscribeShell",
			{ requestCompletionMarker: true },
			{ autoAck: false },
		);
		await shell.waitFor((i) => i.kind === "snapshot");
		const chunks = () =>
			c.received.filter((f) => f._tag === "Chunk" && f.requestId === shell.id)
				.length;
		expect(chunks()).toBe(1);
		expect(sim.stats().unackedChunks).toBe(1);
		// Generate live changes while the first chunk is unacked: nothing more may arrive.
		const launch = await c.call(
			"orchestration.launchThread",
			launchPayload(await firstProjectId(sim), "hello"),
		);
		expect(launch._tag).toBe("Success");
		await until(
			() =>
				(
					sim.projection(launch.value.threadId) as {
						runs: { status: string }[];
					}
				).runs[0]?.status === "completed",
		);
		expect(chunks()).toBe(1);
		c.send({ _tag: "Ack", requestId: shell.id });
		await shell.waitFor((i) => i.kind === "synchronized");
		// The backlog arrives batched, one chunk per Ack.
		c.send({ _tag: "Ack", requestId: shell.id });
		const done = await shell.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.status === "completed",
		);
		expect(done.thread.id).toBe(launch.value.threadId);
		c.close();
	});

	it("answers a stream Interrupt with an Interrupt exit", async () => {
		const c = await connect(sim);
		const shell = c.stream("orchestration.subscribeShell", {});
		await shell.waitFor((i) => i.kind === "snapshot");
		c.send({ _tag: "Interrupt", requestId: shell.id, interruptors: [] });
		expect((await shell.exit()).cause[0]._tag).toBe("Interrupt");
		c.close();
	});

	it("sends nothing while blackholed and closes sockets on dropSockets", async () => {
		const c = await connect(sim);
		await until(() => sim.stats().connections === 1);
		sim.blackhole(true);
		c.send({ _tag: "Ping" });
		const probe = c.call("server.probe", {}, 100);
		await expect(probe).rejects.toThrow("timed out");
		expect(c.received.some((f) => f._tag === "Pong")).toBe(false);
		sim.blackhole(false);
		sim.dropSockets();
		expect((await c.closed).code).toBe(1006);
		await until(() => sim.stats().connections === 0);
	});

	it("delays RPC replies", async () => {
		const c = await connect(sim);
		sim.setDelay(50);
		const started = Date.now();
		await c.call("server.probe", {});
		expect(Date.now() - started).toBeGreaterThanOrEqual(45);
		c.close();
	});

	it("serves server.getConfig with its provider instances", async () => {
		const c = await connect(sim);
		const config = await c.call("server.getConfig", {});
		const providers = config.value.providers as {
			instanceId: string;
			models: { slug: string }[];
		}[];
		expect(providers.map((p) => p.instanceId).sort()).toEqual([
			"claudeAgent",
			"codex",
			"cursor",
			"grok",
			"opencode",
			"restartsteer",
		]);
		expect(
			providers
				.find((p) => p.instanceId === "claudeAgent")
				?.models.map((m) => m.slug),
		).toContain("claude-opus-5");
		c.close();
	});
});

describe("sim getTurnItem (newer servers only)", () => {
	it("answers the item with its withheld output, null for an unknown item, fails for an unknown thread", async () => {
		const c = await connect(sim);
		const projectId = await firstProjectId(sim);
		const launched = await c.call(
			"orchestration.launchThread",
			launchPayload(projectId, "say hi"),
		);
		const threadId = launched.value.threadId as string;
		await until(
			() =>
				(sim.projection(threadId) as { runs: { status: string }[] }).runs[0]
					?.status === "completed",
		);
		const command = (
			sim.projection(threadId) as {
				turnItems: { id: string; type: string; input?: string }[];
			}
		).turnItems.find((i) => i.type === "command_execution" && i.input === "ls");
		expect(command).toMatchObject({ outputOmitted: true });
		const read = await c.call("orchestration.getTurnItem", {
			threadId,
			itemId: command?.id,
		});
		expect(read.value.item).toMatchObject({
			id: command?.id,
			output: "$ ls\nNOTES.md\nsrc\n",
			outputIndicatesFailure: false,
		});
		expect(read.value.item).not.toHaveProperty("outputOmitted");
		expect(
			(await c.call("orchestration.getTurnItem", { threadId, itemId: "nope" }))
				.value,
		).toEqual({ item: null });
		const unknown = await c.call("orchestration.getTurnItem", {
			threadId: "thread-nope",
			itemId: "x",
		});
		expect(unknown.cause[0].error._tag).toBe(
			"OrchestrationV2GetThreadProjectionError",
		);
		c.close();
	});

	it("the pre-release engine dies on the tag", async () => {
		const old = await startSim({ compat: "prerelease" });
		try {
			const c = await connect(old);
			expect(
				await c.call("orchestration.getTurnItem", {
					threadId: "t",
					itemId: "i",
				}),
			).toEqual({
				_tag: "Failure",
				cause: [
					{
						_tag: "Die",
						defect: "Unknown request tag: orchestration.getTurnItem",
					},
				],
			});
			c.close();
		} finally {
			await old.stop();
		}
	});
});
