/**
 * `thread.fork` in the sim against T3's (REVIEW-fa93027.md §2b, §3 item 1): the frames
 * (`thread.created` with the planned AppThread, then `context-transfer.created`; no
 * `thread.forked`, which T3 does not have), the fork's own runs/messages/turnItems empty, the
 * inherited conversation and synthetic marker in `visibleTurnItems`, T3's `latest_stable` and
 * forkable-status rules, and the `checkpoint` source point. captures-v2 holds no fork frames
 * (only the command's name in a Die text), so the shapes come from T3's source: ThreadForkService
 * idx 69176170854, Orchestrator idx 70105834407, projector idx 70189692800.
 */
import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import {
	dispatchPayload,
	type Frame,
	launchPayload,
	type RawClient,
	runEnded,
	startSimWithClient,
} from "../test-client.ts";
import type { Sim } from "../types.ts";
import { createStore, type ThreadState } from "./store.ts";
import { forkThread } from "./thread-fork.ts";

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

type Row = Record<string, unknown>;
type Projection = {
	thread: Row;
	runs: Row[];
	messages: Row[];
	turnItems: Row[];
	checkpoints: Row[];
	contextTransfers: Row[];
	visibleTurnItems: {
		position: number;
		visibility: string;
		sourceThreadId: string;
		sourceItemId: string;
		item: Row;
	}[];
};
const projection = (id: string) => sim.projection(id) as Projection;

/** A thread whose runs said `texts` in turn, each settled as `completed` (or `failed` for "fail"). */
async function source(...texts: string[]) {
	const payload = launchPayload(projectId, texts[0] as string, {
		title: "Source",
	});
	expect((await c.call("orchestration.launchThread", payload))._tag).toBe(
		"Success",
	);
	const stream = c.stream("orchestration.subscribeThread", {
		threadId: payload.threadId,
		afterSequence: 0,
	});
	for (const [i, text] of texts.entries()) {
		if (i > 0)
			await c.call(
				"orchestration.dispatchCommand",
				dispatchPayload(payload.threadId, text),
			);
		const status = text.includes("fail") ? "failed" : "completed";
		await stream.waitFor(
			runEnded(`run:thread:${payload.threadId}:ordinal:${i + 1}`, status),
			3000,
		);
	}
	return payload.threadId;
}

function fork(sourceThreadId: string, sourcePoint: Row, title?: string) {
	const targetThreadId = `thread-${crypto.randomUUID()}`;
	return {
		targetThreadId,
		exit: c.call("orchestration.dispatchCommand", {
			type: "thread.fork",
			commandId: crypto.randomUUID(),
			createdBy: "user",
			creationSource: "mcp",
			sourceThreadId,
			targetThreadId,
			sourcePoint,
			...(title ? { title } : {}),
		}),
	};
}

const runOf = (threadId: string, ordinal: number) =>
	`run:thread:${threadId}:ordinal:${ordinal}`;

describe("thread.fork frames and projection", () => {
	it("thread.created with T3's AppThread, then a pending fork context-transfer.created; nothing copied", async () => {
		const from = await source("the word is pineapple");
		const stream = c.stream("orchestration.subscribeShell", {});
		const { targetThreadId, exit } = fork(from, { type: "latest_stable" });
		expect((await exit)._tag).toBe("Success");
		// The fork's own stream from the start: exactly T3's two events, no `thread.forked`.
		const own = c.stream("orchestration.subscribeThread", {
			threadId: targetThreadId,
			afterSequence: 0,
		});
		const transfer = await own.waitFor(
			(i) => i.event?.type === "context-transfer.created",
		);
		const types = own.items
			.filter((i: Frame) => i.kind === "event")
			.map((i: Frame) => i.event.type);
		expect(types).toEqual(["thread.created", "context-transfer.created"]);
		const created = own.items[0].event;
		const sourceApp = projection(from).thread;
		const runId = runOf(from, 1);
		expect(created.payload).toMatchObject({
			id: targetThreadId,
			projectId: sourceApp.projectId,
			title: "Source fork",
			branch: sourceApp.branch,
			worktreePath: sourceApp.worktreePath,
			activeProviderThreadId: null,
			lineage: {
				parentThreadId: from,
				relationshipToParent: "fork",
				rootThreadId: from,
			},
			forkedFrom: { type: "run", threadId: from, runId },
			archivedAt: null,
			settledOverride: null,
			lastVisitedAt: null,
			deletedAt: null,
		});
		const checkpointId = projection(from).runs[0]?.checkpointId;
		expect(transfer.event.payload).toMatchObject({
			type: "fork",
			sourceThreadId: from,
			targetThreadId,
			sourcePoint: { threadId: from, runId, checkpointId },
			basePoint: null,
			targetRunId: null,
			status: "pending",
			resolution: null,
			createdBy: "user",
			consumedAt: null,
		});
		const p = projection(targetThreadId);
		expect([p.runs, p.messages, p.turnItems]).toEqual([[], [], []]);
		expect(p.contextTransfers).toEqual([transfer.event.payload]);
		// The shell counts the inherited rows and the marker as visible items, none as its own.
		const shell = await stream.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.id === targetThreadId,
		);
		expect(shell.thread.itemCount).toBe(0);
		expect(shell.thread.visibleItemCount).toBe(p.visibleTurnItems.length);
	});

	it("visibleTurnItems: the source's items up to the forked run (inherited), the marker (synthetic), then the fork's own (local)", async () => {
		const from = await source(
			"the word is pineapple",
			"the second word is mango",
		);
		const first = runOf(from, 1);
		const { targetThreadId, exit } = fork(
			from,
			{ type: "run", runId: first },
			"Early",
		);
		expect((await exit)._tag).toBe("Success");
		expect(projection(targetThreadId).thread.title).toBe("Early");
		const rows = () => projection(targetThreadId).visibleTurnItems;
		const sourceItems = projection(from).turnItems.filter(
			(i) => i.runId === first,
		);
		const expected = [
			...sourceItems.map((i, n) => [n, "inherited", String(i.id)]),
			[sourceItems.length, "synthetic", `turn-item:fork:${targetThreadId}`],
		];
		expect(
			rows().map((r): (string | number)[] => [
				r.position,
				r.visibility,
				r.sourceItemId,
			]),
		).toEqual(expected);
		expect(rows().at(-1)?.item).toMatchObject({
			id: `turn-item:fork:${targetThreadId}`,
			threadId: targetThreadId,
			runId: null,
			type: "fork",
			title: "Forked from conversation",
			status: "completed",
			ordinal: 0,
			source: { type: "run", threadId: from, runId: first },
			targetThreadId,
		});
		const texts = rows()
			.filter((r) => r.item.type === "user_message")
			.map((r) => r.item.text);
		expect(texts).toEqual(["the word is pineapple"]);

		// The fork's own run comes after the marker; the agent remembers the inherited words.
		const message = dispatchPayload(targetThreadId, "what do you remember");
		await c.call("orchestration.dispatchCommand", message);
		const own = c.stream("orchestration.subscribeThread", {
			threadId: targetThreadId,
			afterSequence: 0,
		});
		await own.waitFor(runEnded(runOf(targetThreadId, 1), "completed"), 3000);
		const local = rows().filter((r) => r.visibility === "local");
		expect(local.length).toBe(projection(targetThreadId).turnItems.length);
		expect(local[0]?.position).toBe(sourceItems.length + 1);
		const said = projection(targetThreadId).messages.at(-1)?.text;
		expect(said).toContain("user: the word is pineapple");
		expect(said).not.toContain("mango");

		// A fork of the fork inherits the whole chain, both markers included.
		const deeper = fork(targetThreadId, { type: "latest_stable" });
		expect((await deeper.exit)._tag).toBe("Success");
		const chain = projection(deeper.targetThreadId).visibleTurnItems;
		expect(chain.filter((r) => r.item.type === "fork").length).toBe(2);
		expect(
			chain.filter((r) => r.visibility === "synthetic").map((r) => r.item.id),
		).toEqual([`turn-item:fork:${deeper.targetThreadId}`]);
		expect(projection(deeper.targetThreadId).thread.lineage).toMatchObject({
			parentThreadId: targetThreadId,
			rootThreadId: from,
		});
	});

	it("latest_stable is the newest completed run with a checkpoint; a failed run may be forked by id; a checkpoint names its run", async () => {
		const from = await source("say hi", "please fail");
		const stable = fork(from, { type: "latest_stable" });
		expect((await stable.exit)._tag).toBe("Success");
		expect(projection(stable.targetThreadId).thread.forkedFrom).toEqual({
			type: "run",
			threadId: from,
			runId: runOf(from, 1),
		});
		const failed = fork(from, { type: "run", runId: runOf(from, 2) });
		expect((await failed.exit)._tag).toBe("Success");
		const checkpointId = projection(from).checkpoints[0]?.id;
		const byCheckpoint = fork(from, { type: "checkpoint", checkpointId });
		expect((await byCheckpoint.exit)._tag).toBe("Success");
		expect(projection(byCheckpoint.targetThreadId).thread.forkedFrom).toEqual({
			type: "run",
			threadId: from,
			runId: runOf(from, 1),
		});
		const none = fork(from, { type: "checkpoint", checkpointId: "nope" });
		expect(JSON.stringify(await none.exit)).toContain(
			"No stable source run was found for fork source checkpoint.",
		);
	});

	it("a thread with no completed run has no latest stable point", async () => {
		const from = await source("please fail");
		const { exit } = fork(from, { type: "latest_stable" });
		expect(JSON.stringify(await exit)).toContain(
			"No stable source run was found for fork source latest_stable.",
		);
	});
});

describe("forkable source runs (isForkableSourceRunStatus, idx 69176170854)", () => {
	it("waiting, failed, interrupted and cancelled fork; in-progress and rolled-back runs do not", () => {
		const store = createStore();
		const project = store.addProject({ title: "p", workspaceRoot: "/p" });
		const thread: ThreadState = store.createThread(
			{
				id: "src",
				projectId: project.row.id,
				title: "Src",
				providerInstanceId: "codex",
				lineage: { rootThreadId: "src" },
			},
			{},
		);
		const statuses = [
			"completed",
			"waiting",
			"failed",
			"interrupted",
			"cancelled",
			"running",
			"starting",
			"preparing",
			"queued",
			"rolled_back",
		];
		thread.rows.runs = statuses.map((status, i) => ({
			id: `run-${status}`,
			ordinal: i + 1,
			status,
			providerInstanceId: "codex",
			checkpointId: null,
		}));
		const outcome = (status: string) =>
			forkThread(store, {
				createdBy: "user",
				creationSource: "mcp",
				sourceThreadId: "src",
				targetThreadId: `fork-${status}`,
				sourcePoint: { type: "run", runId: `run-${status}` },
			});
		const refused = statuses.filter((s) => typeof outcome(s) === "string");
		expect(refused).toEqual([
			"running",
			"starting",
			"preparing",
			"queued",
			"rolled_back",
		]);
		expect(outcome("rolled_back")).toBe(
			"Fork source run run-rolled_back is rolled_back; in-progress and rolled-back runs cannot be forked.",
		);
		// No checkpoint anywhere: no latest stable point, though a run completed.
		expect(
			forkThread(store, {
				createdBy: "user",
				creationSource: "mcp",
				sourceThreadId: "src",
				targetThreadId: "fork-stable",
				sourcePoint: { type: "latest_stable" },
			}),
		).toBe("No stable source run was found for fork source latest_stable.");
	});
});
