import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import {
	connect,
	dispatchCommand,
	dispatchPayload,
	type Frame,
	launchPayload,
	type RawClient,
	runEnded,
	type StreamHandle,
	startSimWithClient,
	until,
} from "../test-client.ts";
import type { Sim, SimOptions } from "../types.ts";

let sim: Sim;
let c: RawClient;
let projectId: string;
/** Starts this test's sim and client (beforeEach), or restarts them with other options. */
async function useSim(options: SimOptions): Promise<void> {
	({ sim, projectId, client: c } = await startSimWithClient(options));
}
async function stopSim(): Promise<void> {
	c.close();
	await sim.stop();
}
beforeEach(() => useSim({ stepMs: 2, coalesceMs: 2 }));
afterEach(stopSim);

const isEvent =
	(type: string, pred: (payload: Frame) => boolean = () => true) =>
	(i: Frame) =>
		i.kind === "event" && i.event.type === type && pred(i.event.payload);

function runFlow(stream: StreamHandle, runId: string): string[] {
	return stream.items
		.filter(
			(i) =>
				i.kind === "event" &&
				(i.event.type === "run.created" || i.event.type === "run.updated") &&
				i.event.payload.id === runId,
		)
		.map((i) => i.event.payload.status)
		.filter((s, index, all) => index === 0 || all[index - 1] !== s);
}

const itemOf = (stream: StreamHandle, runId: string, type: string) =>
	stream.items
		.filter(
			(i) =>
				i.kind === "event" &&
				i.event.type === "turn-item.updated" &&
				i.event.payload.runId === runId &&
				i.event.payload.type === type,
		)
		.map((i) => i.event.payload);

async function launch(text: string, extra: Record<string, unknown> = {}) {
	const payload = launchPayload(projectId, text, extra);
	const exit = await c.call("orchestration.launchThread", payload);
	expect(exit._tag).toBe("Success");
	const thread = c.stream("orchestration.subscribeThread", {
		threadId: payload.threadId,
		afterSequence: 0,
		requestCompletionMarker: true,
	});
	const run = exit.value.projection.runs[0];
	return {
		payload,
		exit,
		thread,
		threadId: payload.threadId as string,
		runId: run.id as string,
	};
}

async function dispatch(
	threadId: string,
	text: string,
	extra: Record<string, unknown> = {},
) {
	const payload = dispatchPayload(threadId, text, extra);
	const exit = await c.call("orchestration.dispatchCommand", payload);
	expect(exit._tag).toBe("Success");
	return { payload, sequence: exit.value.sequence as number };
}

/** A launched thread whose first run has completed. */
async function launchDone(text: string) {
	const launched = await launch(text);
	await launched.thread.waitFor(runEnded(launched.runId, "completed"));
	return launched;
}

/** Waits for the run to end with the last status of `flow`, then expects that status flow. */
async function expectFlow(
	stream: StreamHandle,
	runId: string,
	flow: string[],
): Promise<void> {
	await stream.waitFor(runEnded(runId, flow.at(-1) as string));
	expect(runFlow(stream, runId)).toEqual(flow);
}

const LAUNCHED_TO_COMPLETED = [
	"preparing",
	"starting",
	"running",
	"waiting",
	"completed",
];
const QUEUED_TO_COMPLETED = [
	"queued",
	"starting",
	"running",
	"waiting",
	"completed",
];

const respond = (
	threadId: string,
	requestId: string,
	extra: Record<string, unknown>,
) =>
	dispatchCommand(c, "runtime-request.respond", threadId, {
		requestId,
		...extra,
	});

const interrupt = (
	threadId: string,
	runId: string,
	extra: Record<string, unknown> = {},
) => dispatchCommand(c, "run.interrupt", threadId, { runId, ...extra });

describe("sim runs", () => {
	it("launches, prepares, runs and completes with a checkpoint", async () => {
		const shell = c.stream("orchestration.subscribeShell", {
			requestCompletionMarker: true,
		});
		const { exit, thread, runId, payload } = await launch("say hi");
		expect(exit.value.resumed).toBe(false);
		expect(runId).toBe(`run:thread:${payload.threadId}:ordinal:1`);
		expect(exit.value.projection.runs[0]).toMatchObject({
			status: "preparing",
			userMessageId: payload.initialMessage.messageId,
		});
		await expectFlow(thread, runId, LAUNCHED_TO_COMPLETED);
		const [assistant] = itemOf(thread, runId, "assistant_message");
		expect(assistant.text).toBe(
			"Hello from the T3 simulator. You said: say hi",
		);
		expect(itemOf(thread, runId, "checkpoint")).toHaveLength(1);
		expect(itemOf(thread, runId, "file_change")[0]).toMatchObject({
			fileName: "NOTES.md",
		});
		const done = await shell.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.status === "completed",
		);
		expect(done.thread).toMatchObject({
			latestRunId: runId,
			activeRunId: null,
			pendingRuntimeRequest: null,
			lastError: null,
		});
		expect(done.thread.latestVisibleMessage.text).toBe(assistant.text);
		expect(done.sequence).toBe(
			thread.items.filter((i) => i.kind === "event").at(-1).sequence,
		);
		const projection = sim.projection(payload.threadId) as Frame;
		expect(projection.runs[0].checkpointId).toBeString();
		expect(projection.messages[0].id).toBe(payload.initialMessage.messageId);
	});

	it("continues a thread with message.dispatch (starting → … → completed)", async () => {
		const first = await launchDone("hello");
		const { payload, sequence } = await dispatch(first.threadId, "again");
		const runId = `run:thread:${first.threadId}:ordinal:2`;
		await expectFlow(first.thread, runId, [
			"starting",
			"running",
			"waiting",
			"completed",
		]);
		const userItem = first.thread.items.find(
			(i) => i.kind === "event" && i.sequence === sequence,
		);
		expect(userItem.event.payload).toMatchObject({
			type: "user_message",
			messageId: payload.messageId,
		});
	});

	it("asks a question and continues after the answer", async () => {
		const shell = c.stream("orchestration.subscribeShell", {});
		const { thread, runId, threadId } = await launch("please ask me something");
		const waiting = await thread.waitFor(
			isEvent(
				"turn-item.updated",
				(p) => p.type === "user_input_request" && p.status === "waiting",
			),
		);
		const item = waiting.event.payload;
		expect(item.questions[0]).toMatchObject({
			id: "color",
			header: "Color",
			question: "Which color should I use?",
			multiSelect: false,
		});
		expect(item.questions[0].options.map((o: Frame) => o.value)).toEqual([
			"red",
			"blue",
		]);
		const pending = await shell.waitFor(
			(i) =>
				i.kind === "thread.updated" && i.thread.pendingRuntimeRequest !== null,
		);
		expect(pending.thread.pendingRuntimeRequest).toMatchObject({
			id: item.requestId,
			kind: "user_input",
		});
		expect(pending.thread.status).toBe("running");
		const answer = await respond(threadId, item.requestId, {
			answers: { color: "red" },
		});
		expect(answer._tag).toBe("Success");
		await expectFlow(thread, runId, LAUNCHED_TO_COMPLETED);
		expect(itemOf(thread, runId, "assistant_message").at(-1).text).toBe(
			"You chose red.",
		);
		expect(itemOf(thread, runId, "user_input_request").at(-1).status).toBe(
			"completed",
		);
		const resolved = (sim.projection(threadId) as Frame).runtimeRequests[0];
		expect(resolved).toMatchObject({
			status: "resolved",
			answers: { color: "red" },
		});
		await shell.waitFor(
			(i) =>
				i.kind === "thread.updated" &&
				i.thread.status === "completed" &&
				i.thread.pendingRuntimeRequest === null,
		);
	});

	it("asks for a command approval; accept runs it, decline does not", async () => {
		for (const [decision, text] of [
			["accept", "Command approved and run."],
			["decline", "Command declined."],
		] as const) {
			const { thread, runId, threadId } = await launch("run a command please", {
				runtimeMode: "approval-required",
			});
			const waiting = await thread.waitFor(
				isEvent("turn-item.updated", (p) => p.type === "approval_request"),
			);
			expect(waiting.event.payload).toMatchObject({
				requestKind: "command",
				prompt: "sim agent wants to list files",
				status: "waiting",
			});
			const request = (sim.projection(threadId) as Frame).runtimeRequests[0];
			expect(request).toMatchObject({ kind: "command", status: "pending" });
			await respond(threadId, waiting.event.payload.requestId, { decision });
			await thread.waitFor(runEnded(runId, "completed"));
			expect(itemOf(thread, runId, "assistant_message").at(-1).text).toBe(text);
			const ls = itemOf(thread, runId, "command_execution").filter(
				(i) => i.input === "ls",
			);
			expect(ls.length > 0).toBe(decision === "accept");
		}
	});

	it("asks as T3 does: commands and edits in approval-required, commands in auto-accept-edits, never in full-access", async () => {
		// [mode, prompt, the approval kinds asked (each accepted)]
		const cases: [string, string, string[]][] = [
			["approval-required", "run a command", ["command"]],
			["approval-required", "edit a file", ["file-change"]],
			["approval-required", "hello", ["command", "file-change"]],
			["auto-accept-edits", "run a command", ["command"]],
			["auto-accept-edits", "edit a file", []],
			["auto-accept-edits", "hello", ["command"]],
			["full-access", "run a command", []],
			["full-access", "edit a file", []],
			["full-access", "hello", []],
		];
		for (const [runtimeMode, prompt, kinds] of cases) {
			const { thread, runId, threadId } = await launch(prompt, { runtimeMode });
			for (const [index, kind] of kinds.entries()) {
				const asked = await thread.waitFor(
					isEvent(
						"turn-item.updated",
						(p) =>
							p.type === "approval_request" &&
							p.status === "waiting" &&
							p.requestKind === kind,
					),
				);
				expect(
					(sim.projection(threadId) as Frame).runtimeRequests[index],
				).toMatchObject({ kind, status: "pending" });
				await respond(threadId, asked.event.payload.requestId, {
					decision: "accept",
				});
			}
			await thread.waitFor(runEnded(runId, "completed"));
			const projection = sim.projection(threadId) as Frame;
			expect([
				runtimeMode,
				prompt,
				projection.runtimeRequests.map((r: Frame) => r.kind),
			]).toEqual([runtimeMode, prompt, kinds]);
			// Approved or never asked, the tool ran: the edit is in the run's files.
			if (prompt === "edit a file")
				expect(itemOf(thread, runId, "file_change")).toHaveLength(1);
		}
	});

	it("a declined edit changes nothing", async () => {
		const { thread, runId, threadId } = await launch("edit a file", {
			runtimeMode: "approval-required",
		});
		const asked = await thread.waitFor(
			isEvent("turn-item.updated", (p) => p.type === "approval_request"),
		);
		expect(asked.event.payload).toMatchObject({
			requestKind: "file-change",
			prompt: "sim agent wants to edit src/app.ts",
		});
		await respond(threadId, asked.event.payload.requestId, {
			decision: "decline",
		});
		await thread.waitFor(runEnded(runId, "completed"));
		expect(itemOf(thread, runId, "assistant_message").at(-1).text).toBe(
			"Edit declined.",
		);
		expect(itemOf(thread, runId, "file_change")).toEqual([]);
	});

	it("interrupts a long task: interrupted, no waiting, no checkpoint", async () => {
		const { thread, runId, threadId } = await launch("start the long task");
		await thread.waitFor(
			isEvent(
				"turn-item.updated",
				(p) =>
					p.type === "assistant_message" &&
					p.text === "Working on the long task…",
			),
		);
		const exit = await interrupt(threadId, runId, {
			reason: "test stop",
			holdQueue: true,
		});
		expect(exit._tag).toBe("Success");
		await expectFlow(thread, runId, [
			"preparing",
			"starting",
			"running",
			"interrupted",
		]);
		expect(itemOf(thread, runId, "run_interrupt_request")[0]).toMatchObject({
			message: "test stop",
			status: "completed",
		});
		expect(itemOf(thread, runId, "run_interrupt_result")[0]).toMatchObject({
			status: "interrupted",
		});
		expect(itemOf(thread, runId, "checkpoint")).toHaveLength(0);
		const run = (sim.projection(threadId) as Frame).runs[0];
		expect(run).toMatchObject({ status: "interrupted", checkpointId: null });
		expect(run.completedAt).toBeString();
		const again = await interrupt(threadId, runId);
		expect(again.cause[0].error.message).toBe(
			`Run ${runId} is not interruptible.`,
		);
	});

	it("finishes a long task on finishRun", async () => {
		const { thread, runId, threadId } = await launch("long task");
		await thread.waitFor(
			isEvent("turn-item.updated", (p) => p.type === "assistant_message"),
		);
		sim.finishRun(threadId);
		await thread.waitFor(runEnded(runId, "completed"));
	});

	it("fails a run with an error item and the shell's lastError", async () => {
		const shell = c.stream("orchestration.subscribeShell", {});
		const { thread, runId } = await launch("please fail");
		await expectFlow(thread, runId, [
			"preparing",
			"starting",
			"running",
			"failed",
		]);
		expect(itemOf(thread, runId, "error")[0].failure).toEqual({
			class: "provider_error",
			message: "sim agent failure",
			code: null,
			retryable: null,
		});
		const failed = await shell.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.status === "failed",
		);
		expect(failed.thread).toMatchObject({
			lastError: "sim agent failure",
			activeRunId: null,
		});
	});

	it("streams a slow answer as accumulated whole-row upserts", async () => {
		const { thread, runId } = await launchDone("be slow");
		const rows = itemOf(thread, runId, "assistant_message");
		expect(rows.filter((r) => r.streaming).map((r) => r.text)).toEqual([
			"Streaming ",
			"Streaming slowly, ",
			"Streaming slowly, piece ",
			"Streaming slowly, piece by ",
			"Streaming slowly, piece by piece.",
		]);
		expect(rows.at(-1)).toMatchObject({
			streaming: false,
			text: "Streaming slowly, piece by piece.",
		});
	});

	it("queues messages on a busy thread and starts them after an interrupt", async () => {
		const shell = c.stream("orchestration.subscribeShell", {});
		const { thread, runId, threadId } = await launch("long task");
		await thread.waitFor(isEvent("run.updated", (p) => p.status === "running"));
		await dispatch(threadId, "second", {
			dispatchMode: { type: "start_immediately" },
		});
		await dispatch(threadId, "third", {
			dispatchMode: { type: "queue_after_active" },
		});
		const run2 = `run:thread:${threadId}:ordinal:2`;
		const run3 = `run:thread:${threadId}:ordinal:3`;
		const queued = await shell.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.latestRunId === run3,
		);
		expect(queued.thread).toMatchObject({
			status: "queued",
			activeRunId: runId,
		});
		await interrupt(threadId, runId);
		await expectFlow(thread, run3, QUEUED_TO_COMPLETED);
		expect(runFlow(thread, run2)).toEqual(QUEUED_TO_COMPLETED);
		const started2 = thread.items.findIndex(
			isEvent("run.updated", (p) => p.id === run2 && p.status === "starting"),
		);
		const started3 = thread.items.findIndex(
			isEvent("run.updated", (p) => p.id === run3 && p.status === "starting"),
		);
		expect(started2).toBeLessThan(started3);
	});

	it("keeps queued runs queued after an interrupt with holdQueue", async () => {
		const { thread, runId, threadId } = await launch("long task");
		await thread.waitFor(isEvent("run.updated", (p) => p.status === "running"));
		await dispatch(threadId, "second");
		await interrupt(threadId, runId, { holdQueue: true });
		await thread.waitFor(runEnded(runId, "interrupted"));
		const runs = (sim.projection(threadId) as Frame).runs;
		expect(runs[1].status).toBe("queued");
		await dispatchCommand(c, "queue.resume", threadId);
		await thread.waitFor(runEnded(runs[1].id, "completed"));
	});

	it("marks held queued runs queueHeld from the interrupt on, and clears it on queue.resume", async () => {
		const { thread, runId, threadId } = await launch("long task");
		await thread.waitFor(isEvent("run.updated", (p) => p.status === "running"));
		await dispatch(threadId, "second");
		const queuedId = (sim.projection(threadId) as Frame).runs[1].id;
		await interrupt(threadId, runId, { holdQueue: true });
		// Already in the projection the reply's sequence covers, before the run has ended.
		expect((sim.projection(threadId) as Frame).runs[1].queueHeld).toBe(true);
		await thread.waitFor(runEnded(runId, "interrupted"));
		await dispatch(threadId, "third");
		expect((sim.projection(threadId) as Frame).runs[2]).toMatchObject({
			status: "queued",
			queueHeld: true,
		});
		await dispatchCommand(c, "queue.resume", threadId);
		await thread.waitFor(
			isEvent("run.updated", (p) => p.id === queuedId && p.queueHeld === false),
		);
		await thread.waitFor(runEnded(queuedId, "completed"));
	});

	it("without queue holding ignores holdQueue and does not know queue.resume", async () => {
		await stopSim();
		await useSim({ stepMs: 2, coalesceMs: 2, queueHolding: false });
		const { thread, runId, threadId } = await launch("long task");
		await thread.waitFor(isEvent("run.updated", (p) => p.status === "running"));
		await dispatch(threadId, "second");
		const queuedId = (sim.projection(threadId) as Frame).runs[1].id;
		await interrupt(threadId, runId, { holdQueue: true });
		await thread.waitFor(runEnded(queuedId, "completed"));
		const resume = await dispatchCommand(c, "queue.resume", threadId);
		expect(resume._tag).toBe("Failure");
	});

	it("deleteThread: thread.deleted, then the runs still going are cancelled", async () => {
		const { thread, runId, threadId } = await launch("long task");
		await thread.waitFor(isEvent("run.updated", (p) => p.status === "running"));
		sim.deleteThread(threadId);
		await thread.waitFor(runEnded(runId, "cancelled"));
		const deleted = thread.items.findIndex(isEvent("thread.deleted"));
		const cancelled = thread.items.findIndex(runEnded(runId, "cancelled"));
		expect(deleted).toBeGreaterThan(-1);
		expect(deleted).toBeLessThan(cancelled);
		expect(sim.threadIds()).not.toContain(threadId);
	});

	it("restart with loseState forgets threads and starts sequences again", async () => {
		const { threadId } = await launchDone("hello");
		await sim.restart({ loseState: true });
		expect(sim.threadIds()).toEqual([]);
		expect(sim.projection(threadId)).toBeUndefined();
		c.close();
		c = await connect(sim);
		const shell = c.stream("orchestration.subscribeShell", {
			requestCompletionMarker: true,
		});
		const first = await shell.waitFor((i) => i.kind === "snapshot");
		expect(first.snapshot.threads).toEqual([]);
		expect(first.snapshot.snapshotSequence).toBe(1);
	});

	it("replays an accepted commandId instead of running it twice", async () => {
		const { payload, exit, thread, runId, threadId } = await launch("hello");
		const replay = await c.call("orchestration.launchThread", {
			...payload,
			title: "changed",
		});
		expect(replay.value).toMatchObject({
			threadId: exit.value.threadId,
			resumed: true,
		});
		await thread.waitFor(runEnded(runId, "completed"));
		const message = dispatchPayload(threadId, "once");
		const first = await c.call("orchestration.dispatchCommand", message);
		const second = await c.call("orchestration.dispatchCommand", {
			...message,
			text: "different",
		});
		expect(second.value).toEqual(first.value);
		expect((sim.projection(threadId) as Frame).runs).toHaveLength(2);
		expect(sim.threadIds()).toEqual([threadId]);
	});

	it("executes a dropped reply, closes the socket, and answers the replay", async () => {
		sim.dropNextReply("orchestration.launchThread");
		const payload = launchPayload(projectId, "hello");
		const lost = c.call("orchestration.launchThread", payload, 100);
		expect((await c.closed).code).toBe(1006);
		await expect(lost).rejects.toThrow("timed out");
		expect(sim.threadIds()).toEqual([payload.threadId]);
		c = await connect(sim);
		const replay = await c.call("orchestration.launchThread", payload);
		expect(replay.value).toMatchObject({
			threadId: payload.threadId,
			resumed: true,
		});
		expect(sim.threadIds()).toHaveLength(1);
	});

	it("resumes the shell after a sequence with metadata snapshot + coalesced deltas", async () => {
		const a = await launchDone("hello");
		const cursor = a.thread.items.filter((i) => i.kind === "event").at(-1)
			.sequence as number;
		const b = await launchDone("world");
		const resumed = c.stream("orchestration.subscribeShell", {
			afterSequence: cursor,
			requestCompletionMarker: true,
		});
		await resumed.waitFor((i) => i.kind === "synchronized");
		const kinds = resumed.items.map((i) => i.kind);
		expect(kinds).toEqual(["snapshot", "thread.updated", "synchronized"]);
		expect(resumed.items[0].resolvedRepositoryIdentityRoots).toEqual([
			"/srv/t3/demo",
		]);
		expect(resumed.items[0].snapshot.threads).toEqual([]);
		expect(resumed.items[1].thread).toMatchObject({
			id: b.threadId,
			status: "completed",
		});
		const ahead = c.stream("orchestration.subscribeShell", {
			afterSequence: 10_000_000,
			requestCompletionMarker: true,
		});
		await ahead.waitFor((i) => i.kind === "synchronized");
		expect(ahead.items[0].resolvedRepositoryIdentityRoots).toBeUndefined();
		expect(ahead.items[0].snapshot.threads).toHaveLength(2);
	});

	it("coalesces shell changes inside the window", async () => {
		await stopSim();
		await useSim({ stepMs: 1, coalesceMs: 300 });
		const shell = c.stream("orchestration.subscribeShell", {});
		await launchDone("hello");
		const update = await shell.waitFor((i) => i.kind === "thread.updated");
		// The whole run fit in one window: one delta with the final state.
		expect(update.thread.status).toBe("completed");
		expect(shell.items.filter((i) => i.kind === "thread.updated")).toHaveLength(
			1,
		);
	});

	it("restart closes sockets, cancels unfinished runs and keeps state on the same port", async () => {
		const { thread, runId, threadId } = await launch("long task");
		await thread.waitFor(isEvent("run.updated", (p) => p.status === "running"));
		const port = sim.port;
		await sim.restart();
		await c.closed;
		expect(sim.port).toBe(port);
		c = await connect(sim);
		const projection = await c.call("orchestration.getThreadProjection", {
			threadId,
		});
		expect(projection.value.runs[0]).toMatchObject({
			id: runId,
			status: "cancelled",
		});
		expect(projection.value.runs[0].completedAt).toBeString();
		const next = c.stream("orchestration.subscribeThread", {
			threadId,
			requestCompletionMarker: true,
		});
		await next.waitFor((i) => i.kind === "synchronized");
		await dispatch(threadId, "after restart");
		await next.waitFor(
			runEnded(`run:thread:${threadId}:ordinal:2`, "completed"),
		);
	});

	it("archives and deletes threads", async () => {
		const shell = c.stream("orchestration.subscribeShell", {});
		const { threadId } = await launchDone("hello");
		await dispatchCommand(c, "thread.archive", threadId);
		await shell.waitFor(
			(i) => i.kind === "thread.removed" && i.threadId === threadId,
		);
		const archived = await c.call("orchestration.getArchivedShellSnapshot", {});
		expect(archived.value.threads.map((t: Frame) => t.id)).toEqual([threadId]);
		await dispatchCommand(c, "thread.delete", threadId);
		await until(() => sim.threadIds().length === 0);
		const mode = await c.call(
			"orchestration.dispatchCommand",
			dispatchPayload(threadId, "x"),
		);
		expect(mode._tag).toBe("Failure");
	});

	it("sets the runtime mode on a thread", async () => {
		const { thread, threadId } = await launchDone("hello");
		const exit = await dispatchCommand(c, "thread.runtime-mode.set", threadId, {
			runtimeMode: "approval-required",
		});
		const event = await thread.waitFor(isEvent("thread.runtime-mode-updated"));
		expect(event.sequence).toBe(exit.value.sequence);
		expect((sim.projection(threadId) as Frame).thread.runtimeMode).toBe(
			"approval-required",
		);
	});
});
