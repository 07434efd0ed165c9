/**
 * createMachine against the loopback replay server: the machine must go online, mirror the
 * recorded shell stream, and derive.ts must read the recorded threads the way the capture
 * script saw them (its `summary` notes are the expected values).
 */
import { describe, expect, it } from "bun:test";
import {
	finalAssistantMessage,
	findRunByMessageId,
	pendingQuestion,
	runError,
	runOutcome,
} from "../../src/t3/derive/derive.ts";
import type { Machine } from "../../src/t3/machine-api.ts";
import { loadCapture, recordedCalls, summaryNotes } from "./captures.ts";
import {
	cleanupAfterEach,
	replayConfig,
	startReplayMachine,
	states,
} from "./machine-harness.ts";
import type { ReplayServer, ReplayServerOptions } from "./replay-server.ts";
import { until } from "./until.ts";

const cleanups = cleanupAfterEach();

function setup(options: ReplayServerOptions) {
	return startReplayMachine(
		cleanups,
		options,
		(url) => replayConfig("replay", url),
		{ pingIntervalMs: 100, pongTimeoutMs: 2_000 },
	);
}

/** Plays `capture` up to its first pending runtime request, held there; `what` names it. */
async function setupHeldAtRequest(capture: string, what: string) {
	const started = setup({
		capture,
		holdWhen: (v) =>
			v.kind === "thread.updated" &&
			(v.thread as { pendingRuntimeRequest?: unknown }).pendingRuntimeRequest !=
				null,
	});
	const { server, machine } = started;
	await machine.ready(5_000);
	const threadId = server.threadId as string;
	await until(
		() => machine.thread(threadId)?.pendingRuntimeRequest != null,
		5_000,
		what,
	);
	return { ...started, threadId };
}

function messageIds(capture: string): string[] {
	return recordedCalls(loadCapture(capture))
		.filter(
			(c) =>
				c.tag === "orchestration.dispatchCommand" &&
				c.payload.type === "message.dispatch",
		)
		.map((c) => String(c.payload.messageId));
}

/** The thread's detail once played, and the run of the capture's first message in it. */
async function firstRun(
	server: ReplayServer,
	machine: Machine,
	capture: string,
) {
	const detail = await machine.getThread(server.threadId as string);
	const run = findRunByMessageId(
		detail.projection,
		messageIds(capture)[0] as string,
	);
	return { detail, run };
}

async function playToEnd(
	server: ReplayServer,
	machine: Machine,
	finalStatus: string,
): Promise<void> {
	await machine.ready(5_000);
	const threadId = server.threadId as string;
	await until(
		() => server.pendingShellChunks() === 0,
		5_000,
		"the recorded shell stream to be sent",
	);
	await until(
		() => machine.thread(threadId)?.status === finalStatus,
		5_000,
		`thread status ${finalStatus}`,
	);
	await until(
		() => server.acksReceived === server.chunksSent,
		2_000,
		"every chunk acked",
	);
}

describe("machine against recorded servers", () => {
	it("ws-question.jsonl: online, pending question with its text, then completed with the answer", async () => {
		const { server, machine, changes, threadId } = await setupHeldAtRequest(
			"ws-question.jsonl",
			"a pending question",
		);
		const shell = machine.thread(threadId);
		expect(shell?.pendingRuntimeRequest?.kind).toBe("user_input");
		const midway = await machine.getThread(threadId);
		expect(
			pendingQuestion(midway.projection, shell?.pendingRuntimeRequest),
		).toMatchObject({
			kind: "user_input",
			prompt: "Which color should I use?",
			questions: [
				{
					id: "color",
					header: "Color",
					options: ["Red", "Blue"],
					multi_select: false,
					allow_custom: true,
				},
			],
		});
		server.release();
		await playToEnd(server, machine, "completed");
		const summary = summaryNotes(loadCapture("ws-question.jsonl"))[0] as {
			run: { id: string };
			assistantTexts: { text: string }[];
		};
		const { detail, run } = await firstRun(
			server,
			machine,
			"ws-question.jsonl",
		);
		expect(run?.id).toBe(summary.run.id);
		expect(runOutcome(run?.status ?? "")).toBe("completed");
		expect(finalAssistantMessage(detail.projection, run?.id ?? "")).toBe(
			summary.assistantTexts[0]?.text as string,
		);
		expect(
			pendingQuestion(
				detail.projection,
				machine.thread(threadId)?.pendingRuntimeRequest,
			),
		).toBeNull();
		expect(machine.sequence()).toBe(91);
		// A new machine starts out connecting, so the first change is to online.
		expect(states(changes)).toEqual(["online"]);
		expect(changes.some((c) => c.kind === "snapshot")).toBe(true);
		expect(changes.filter((c) => c.kind === "synchronized")).toHaveLength(1);
		expect(machine.status().lastEventAt).not.toBeNull();
		// The shell came over HTTP; the subscription starts after its sequence.
		expect(server.shellRequests()).toEqual([
			{ requestCompletionMarker: true, afterSequence: 60 },
		]);
	});

	it("ws-approval.jsonl: pending approval with its prompt, then completed", async () => {
		const { server, machine, threadId } = await setupHeldAtRequest(
			"ws-approval.jsonl",
			"a pending approval",
		);
		const midway = await machine.getThread(threadId);
		expect(
			pendingQuestion(
				midway.projection,
				machine.thread(threadId)?.pendingRuntimeRequest,
			),
		).toMatchObject({
			kind: "approval",
			request_kind: "command",
			prompt: "fake codex wants to list files",
			questions: [],
		});
		server.release();
		await playToEnd(server, machine, "completed");
		const { detail, run } = await firstRun(
			server,
			machine,
			"ws-approval.jsonl",
		);
		expect(runOutcome(run?.status ?? "")).toBe("completed");
		expect(finalAssistantMessage(detail.projection, run?.id ?? "")).toBe(
			'Approval decision: {"decision":"accept"}',
		);
	});

	it("ws-interrupt.jsonl: interrupted, partial answer kept", async () => {
		const { server, machine } = setup({ capture: "ws-interrupt.jsonl" });
		await playToEnd(server, machine, "interrupted");
		const { detail, run } = await firstRun(
			server,
			machine,
			"ws-interrupt.jsonl",
		);
		expect(runOutcome(run?.status ?? "")).toBe("interrupted");
		expect(finalAssistantMessage(detail.projection, run?.id ?? "")).toBe(
			"Working on the long task...",
		);
		expect(machine.thread(server.threadId as string)?.activeRunId).toBeNull();
	});

	it("ws-fail.jsonl: failed with the provider's error", async () => {
		const { server, machine } = setup({ capture: "ws-fail.jsonl" });
		await playToEnd(server, machine, "failed");
		const { detail, run } = await firstRun(server, machine, "ws-fail.jsonl");
		expect(runOutcome(run?.status ?? "")).toBe("failed");
		expect(
			runError(
				detail.projection,
				run?.id ?? "",
				machine.thread(server.threadId as string),
			),
		).toBe("fake codex failure");
		expect(finalAssistantMessage(detail.projection, run?.id ?? "")).toBe(
			"About to fail.",
		);
	});

	it("ws-busy.jsonl: queued runs, one interrupted, the queued ones complete", async () => {
		const { server, machine, changes } = setup({ capture: "ws-busy.jsonl" });
		await playToEnd(server, machine, "completed");
		const statuses = changes.flatMap((c) =>
			c.kind === "thread" ? [c.thread.status] : [],
		);
		expect(statuses).toContain("queued");
		const detail = await machine.getThread(server.threadId as string);
		const outcomes = messageIds("ws-busy.jsonl").map((id) =>
			runOutcome(findRunByMessageId(detail.projection, id)?.status ?? ""),
		);
		expect(outcomes).toEqual(["interrupted", "completed", "completed"]);
	});

	it("ws-shell-resume.jsonl: a socket drop goes offline, reconnects and resumes with afterSequence", async () => {
		const { server, machine, changes } = setup({
			capture: "ws-shell-resume.jsonl",
		});
		await machine.ready(5_000);
		await until(
			() => server.pendingShellChunks() === 0,
			5_000,
			"first subscription replayed",
		);
		expect(machine.sequence()).toBe(35);
		const threadId = server.threadId as string;
		expect(machine.thread(threadId)?.status).toBe("completed");
		await until(
			() => server.acksReceived === server.chunksSent,
			2_000,
			"every chunk acked before the drop",
		);
		server.dropSockets();
		await until(() => states(changes).includes("offline"), 5_000, "offline");
		await until(
			() => states(changes).filter((s) => s === "online").length === 2,
			5_000,
			"online again",
		);
		// The first subscription starts after the shell read over HTTP, the resume where it was.
		expect(server.shellRequests()).toEqual([
			{ requestCompletionMarker: true, afterSequence: 35 },
			{ requestCompletionMarker: true, afterSequence: 35 },
		]);
		// The resumed authoritative snapshot held the same thread: nothing removed, nothing lost.
		expect(changes.some((c) => c.kind === "thread.removed")).toBe(false);
		expect(machine.thread(threadId)?.status).toBe("completed");
		const offline = changes.find(
			(c) => c.kind === "state" && c.status.state === "offline",
		);
		expect(offline?.kind === "state" && offline.status.reason).toContain(
			"offline",
		);
		await until(
			() => server.acksReceived === server.chunksSent,
			2_000,
			"every chunk acked",
		);
	});
});
