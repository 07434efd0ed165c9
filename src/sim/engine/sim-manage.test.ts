/**
 * The sim's thread management and diff surface against PROTOCOL.md's tables: §5 (archived shell
 * snapshot, getTurnDiff / getFullThreadDiff with OBSERVED.md §5.8's turn-0 refusal), §6.7
 * (provider-session.detach), §6.8–6.9 (metadata, archive, settle, delete) and the refusals.
 */
import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCapture } from "../../../test/replay/captures.ts";
import {
	dispatchCommand,
	dispatchPayload,
	type Frame,
	launchPayload,
	type RawClient,
	runEnded,
	startSimWithClient,
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

async function launch(text: string) {
	const payload = launchPayload(projectId, text);
	const exit = await c.call("orchestration.launchThread", payload);
	expect(exit._tag).toBe("Success");
	const stream = c.stream("orchestration.subscribeThread", {
		threadId: payload.threadId,
		afterSequence: 0,
	});
	return {
		threadId: payload.threadId,
		runId: exit.value.projection.runs[0].id as string,
		stream,
	};
}

async function run(threadId: string, text: string) {
	const exit = await c.call(
		"orchestration.dispatchCommand",
		dispatchPayload(threadId, text),
	);
	expect(exit._tag).toBe("Success");
	const ordinal = (sim.projection(threadId) as { runs: unknown[] }).runs.length;
	return `run:thread:${threadId}:ordinal:${ordinal}`;
}

const failMessage = (exit: Frame): string =>
	exit.cause[0].error.message as string;

describe("sim diffs (PROTOCOL.md §5)", () => {
	it("serves a run's unified diff, refuses turn 0 and runs without a checkpoint", async () => {
		const { threadId, runId, stream } = await launch("edit a file");
		await stream.waitFor(runEnded(runId, "completed"));
		const second = await run(threadId, "big edit");
		await stream.waitFor(runEnded(second, "completed"));

		const d = await c.call("orchestration.getTurnDiff", {
			threadId,
			fromTurnCount: 1,
			toTurnCount: 2,
		});
		expect(d._tag).toBe("Success");
		expect(Object.keys(d.value).sort()).toEqual(
			["diff", "fromTurnCount", "threadId", "toTurnCount"].sort(),
		);
		const diff = d.value.diff as string;
		expect(diff.startsWith("diff --git a/data/big.txt b/data/big.txt\n")).toBe(
			true,
		);
		expect(diff).toContain("new file mode 100644\n--- /dev/null\n");
		expect(diff.split("\n").filter((l) => l.startsWith("+")).length).toBe(2501);

		// Turn 0 as a start is refused like the real server (OBSERVED.md §5.8).
		const zero = await c.call("orchestration.getTurnDiff", {
			threadId,
			fromTurnCount: 0,
			toTurnCount: 1,
		});
		expect(zero.cause[0]._tag).toBe("Fail");
		expect(zero.cause[0].error._tag).toBe("OrchestrationGetTurnDiffError");
		expect(zero.cause[0].error.cause).toEqual({
			name: "CheckpointRefUnavailableError",
			message: `Checkpoint unavailable for thread ${threadId} turn 0: Checkpoint ref is unavailable for turn 0.`,
		});

		// The whole thread from its start; the first run's edit of src/app.ts is in it.
		const full = await c.call("orchestration.getFullThreadDiff", {
			threadId,
			toTurnCount: 2,
		});
		expect(full.value.fromTurnCount).toBe(0);
		expect(full.value.diff).toContain("--- a/src/app.ts\n+++ b/src/app.ts\n");
		expect(full.value.diff).toContain("-console.log(greet");

		// An interrupted run has no checkpoint, hence no diff.
		const third = await run(threadId, "long task");
		await stream.waitFor(
			(i) =>
				i.kind === "event" &&
				i.event.type === "run.updated" &&
				i.event.payload.id === third &&
				i.event.payload.status === "running",
		);
		await dispatchCommand(c, "run.interrupt", threadId, { runId: third });
		await stream.waitFor(runEnded(third, "interrupted"));
		const none = await c.call("orchestration.getTurnDiff", {
			threadId,
			fromTurnCount: 2,
			toTurnCount: 3,
		});
		expect(failMessage(none)).toBe("Failed to load turn diff");
		expect(none.cause[0].error.cause.message).toContain(
			"Checkpoint ref is unavailable for turn 3.",
		);
	});
});

describe("sim queue resume", () => {
	it("a queue.resume sent before the held interrupt has ended still lets the queue start", async () => {
		const { threadId, runId, stream } = await launch("long task");
		await stream.waitFor(
			(i) =>
				i.kind === "event" &&
				i.event.type === "run.updated" &&
				i.event.payload.id === runId &&
				i.event.payload.status === "running",
		);
		const queued = await run(threadId, "say hi");
		await dispatchCommand(c, "run.interrupt", threadId, {
			runId,
			holdQueue: true,
		});
		// At once, while the interrupted run is still ending.
		expect((await dispatchCommand(c, "queue.resume", threadId))._tag).toBe(
			"Success",
		);
		await stream.waitFor(runEnded(runId, "interrupted"));
		await stream.waitFor(runEnded(queued, "completed"));
	});
});

describe("sim workspace", () => {
	it("edits only its in-memory copy, never the project directory it was given", async () => {
		const dir = mkdtempSync(join(tmpdir(), "sim-project-"));
		writeFileSync(join(dir, "README.md"), "mine\n");
		const own = await startSimWithClient({
			stepMs: 2,
			coalesceMs: 2,
			projects: [{ title: "mine", workspaceRoot: dir }],
		});
		try {
			const payload = launchPayload(own.projectId, "big edit");
			const exit = await own.client.call("orchestration.launchThread", payload);
			const runId = exit.value.projection.runs[0].id;
			const stream = own.client.stream("orchestration.subscribeThread", {
				threadId: payload.threadId,
				afterSequence: 0,
			});
			await stream.waitFor(runEnded(runId, "completed"));
			const diff = await own.client.call("orchestration.getFullThreadDiff", {
				threadId: payload.threadId,
				toTurnCount: 1,
			});
			expect(diff.value.diff).toContain("+++ b/data/big.txt");
			expect(readdirSync(dir)).toEqual(["README.md"]);
		} finally {
			own.client.close();
			await own.sim.stop();
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe("sim thread lifecycle (PROTOCOL.md §6.7–6.9)", () => {
	it("renames, archives into the archived snapshot, unarchives, settles, detaches and deletes", async () => {
		const shell = c.stream("orchestration.subscribeShell", {
			requestCompletionMarker: true,
		});
		const { threadId, runId, stream } = await launch("say hi");
		await stream.waitFor(runEnded(runId, "completed"));

		const renamed = await dispatchCommand(
			c,
			"thread.metadata.update",
			threadId,
			{
				title: "renamed",
			},
		);
		expect(renamed._tag).toBe("Success");
		await shell.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.title === "renamed",
		);

		expect((await dispatchCommand(c, "thread.archive", threadId))._tag).toBe(
			"Success",
		);
		await shell.waitFor(
			(i) => i.kind === "thread.removed" && i.threadId === threadId,
		);
		const archived = await c.call("orchestration.getArchivedShellSnapshot", {});
		expect(Object.keys(archived.value).sort()).toEqual([
			"projects",
			"schemaVersion",
			"snapshotSequence",
			"threads",
		]);
		expect(archived.value.threads.map((t: Frame) => t.id)).toEqual([threadId]);
		expect(archived.value.threads[0].archivedAt).toEqual(expect.any(String));
		expect(
			failMessage(await dispatchCommand(c, "thread.archive", threadId)),
		).toBe(`Thread ${threadId} is already archived.`);
		expect((await dispatchCommand(c, "thread.unarchive", threadId))._tag).toBe(
			"Success",
		);

		const settled = await dispatchCommand(c, "thread.settle", threadId);
		expect(settled._tag).toBe("Success");
		const settledEvent = await stream.waitFor(
			(i) => i.kind === "event" && i.event.type === "thread.settled",
		);
		expect(settledEvent.event.payload).toMatchObject({
			id: threadId,
			settledOverride: "settled",
			settledAt: expect.any(String),
		});
		// thread.unsettle requires its reason (PROTOCOL.md §6.9).
		const noReason = await dispatchCommand(c, "thread.unsettle", threadId);
		expect(noReason.cause[0]).toEqual({
			_tag: "Die",
			defect: 'Missing key\n  at ["reason"]',
		});
		expect(
			(
				await dispatchCommand(c, "thread.unsettle", threadId, {
					reason: "user",
				})
			)._tag,
		).toBe("Success");

		const sessionId = (
			sim.projection(threadId) as { providerSessions: { id: string }[] }
		).providerSessions[0]?.id;
		expect(sessionId).toBeDefined();
		const detached = await dispatchCommand(
			c,
			"provider-session.detach",
			threadId,
			{ providerSessionId: sessionId, reason: "test" },
		);
		expect(detached._tag).toBe("Success");
		const detachedEvent = await stream.waitFor(
			(i) => i.kind === "event" && i.event.type === "provider-session.detached",
		);
		expect(detachedEvent.event.payload).toEqual({
			providerSessionId: sessionId,
			detachedAt: expect.any(String),
			reason: "test",
		});
		expect(
			(sim.projection(threadId) as { providerSessions: unknown[] })
				.providerSessions,
		).toEqual([]);

		expect((await dispatchCommand(c, "thread.delete", threadId))._tag).toBe(
			"Success",
		);
		expect(sim.threadIds()).not.toContain(threadId);
	});

	it("refuses archive while the agent works and settle while a request is pending", async () => {
		const busy = await launch("long task");
		const archive = await dispatchCommand(c, "thread.archive", busy.threadId);
		expect(archive.cause[0].error).toMatchObject({
			_tag: "OrchestrationV2DispatchCommandError",
			commandType: "thread.archive",
			message: `Thread ${busy.threadId} cannot be archived while it is working.`,
		});

		const asking = await launch("ask me");
		await asking.stream.waitFor(
			(i) =>
				i.kind === "event" &&
				i.event.type === "runtime-request.updated" &&
				i.event.payload.status === "pending",
		);
		const settle = await dispatchCommand(c, "thread.settle", asking.threadId);
		expect(failMessage(settle)).toBe(
			`Thread ${asking.threadId} cannot be settled while a runtime request is pending.`,
		);
	});
});

/** Frames a real pre-release server sent (captures-v2), by capture file. */
const captured = (file: string): Frame[] => loadCapture(file);

const keys = (o: Record<string, unknown>) => Object.keys(o).sort();

describe("fidelity of the new frames against captures-v2", () => {
	it("getTurnDiff's turn-0 refusal, its success and the archived snapshot have the captured shapes", async () => {
		const notes = captured("ws-extras.jsonl").filter((l) => l.dir === "note");
		const real = {
			zero: notes.find((n) => n.text === "getTurnDiff 0..1")?.data,
			ok: notes.find((n) => n.text === "getTurnDiff 1..2")?.data,
		};
		const archivedExit = captured("ws-extras.jsonl").find(
			(l) =>
				l.dir === "recv" &&
				l.frame?._tag === "Exit" &&
				l.frame.exit?.value?.threads !== undefined &&
				l.frame.requestId === "8",
		)?.frame.exit.value;
		expect(real.zero).toBeDefined();
		expect(archivedExit).toBeDefined();

		const { threadId, runId, stream } = await launch("edit a file");
		await stream.waitFor(runEnded(runId, "completed"));
		const second = await run(threadId, "say hi");
		await stream.waitFor(runEnded(second, "completed"));
		const zero = await c.call("orchestration.getTurnDiff", {
			threadId,
			fromTurnCount: 0,
			toTurnCount: 1,
		});
		const realError = real.zero.cause[0].error;
		const simError = zero.cause[0].error;
		expect(keys(simError)).toEqual(keys(realError));
		expect(simError._tag).toBe(realError._tag);
		expect(simError.message).toBe(realError.message);
		expect(simError.cause.name).toBe(realError.cause.name);
		expect(simError.cause.message.replace(threadId, "T")).toBe(
			realError.cause.message.replace(/thread-[0-9a-f-]+/, "T"),
		);
		const ok = await c.call("orchestration.getTurnDiff", {
			threadId,
			fromTurnCount: 1,
			toTurnCount: 2,
		});
		expect(keys(ok.value)).toEqual(keys(real.ok.value));

		await dispatchCommand(c, "thread.archive", threadId);
		const archived = await c.call("orchestration.getArchivedShellSnapshot", {});
		expect(keys(archived.value)).toEqual(keys(archivedExit));
		const simShell = archived.value.threads[0] as Record<string, unknown>;
		const realShell = archivedExit.threads[0] as Record<string, unknown>;
		// Every key the real archived shell has, the sim's has (historyOrigin is optional, §7.2).
		const missing = keys(realShell).filter(
			(k) => !(k in simShell) && k !== "historyOrigin",
		);
		expect(missing).toEqual([]);
	});

	it("provider-session.detached carries the captured payload keys", async () => {
		const real = captured("ws-detach-stream.jsonl")
			.flatMap((l) => (l.frame?._tag === "Chunk" ? l.frame.values : []))
			.find(
				(v: Frame) =>
					v.kind === "event" && v.event.type === "provider-session.detached",
			);
		expect(real).toBeDefined();
		const { threadId, runId, stream } = await launch("say hi");
		await stream.waitFor(runEnded(runId, "completed"));
		const sessionId = (
			sim.projection(threadId) as { providerSessions: { id: string }[] }
		).providerSessions[0]?.id;
		await dispatchCommand(c, "provider-session.detach", threadId, {
			providerSessionId: sessionId,
			reason: "connector test",
		});
		const event = await stream.waitFor(
			(i) => i.kind === "event" && i.event.type === "provider-session.detached",
		);
		expect(keys(event.event)).toEqual(keys(real.event));
		expect(keys(event.event.payload)).toEqual(keys(real.event.payload));
	});
});
