/**
 * The queue and organisation commands of USAGE-AND-QUEUES.md §3 on the simulator: reorder
 * renumbers `queuePosition` 1..n (events only for rows that moved) and delivery follows it;
 * promote cancels the queued run and steers its message into the running one; pin, unpin,
 * snooze, unsnooze and mark-unread keep their state on the thread; T3's refusals; and the
 * pre-release engine, which has reorder, promote and snooze but no pins nor mark-unread.
 */
import { afterEach, describe, expect, it } from "bun:test";
import {
	dispatchCommand,
	dispatchPayload,
	type Frame,
	launchPayload,
	type RawClient,
	runEnded,
	startSimWithClient,
	until,
} from "../test-client.ts";
import type { Sim } from "../types.ts";

let sim: Sim;
let c: RawClient;
let projectId: string;
afterEach(async () => {
	c?.close();
	await sim?.stop();
});

async function start(compat: "current" | "prerelease" = "current") {
	({
		sim,
		projectId,
		client: c,
	} = await startSimWithClient({ stepMs: 2, coalesceMs: 2, compat }));
}

type Run = {
	id: string;
	status: string;
	queuePosition?: number | null;
	startedAt: string | null;
	completedAt: string | null;
};
const projection = (threadId: string) =>
	sim.projection(threadId) as {
		thread: Record<string, unknown>;
		runs: Run[];
		turnItems: { type: string; inputIntent?: string; text?: string }[];
		messages: { runId: string; text: string; role: string }[];
	};
const failMessage = (exit: Frame): string =>
	exit.cause[0].error.message as string;

/** A running "long task" with `followUps` queued behind it. */
async function busy(followUps: string[]) {
	const payload = launchPayload(projectId, "long task");
	const exit = await c.call("orchestration.launchThread", payload);
	expect(exit._tag).toBe("Success");
	const threadId = payload.threadId as string;
	const runId = exit.value.projection.runs[0].id as string;
	const stream = c.stream("orchestration.subscribeThread", {
		threadId,
		afterSequence: 0,
	});
	await until(() => projection(threadId).runs[0]?.status === "running");
	const queued: string[] = [];
	for (const text of followUps) {
		const d = await c.call(
			"orchestration.dispatchCommand",
			dispatchPayload(threadId, text, {
				dispatchMode: { type: "queue_after_active" },
			}),
		);
		expect(d._tag).toBe("Success");
		queued.push(projection(threadId).runs.at(-1)?.id as string);
	}
	return { threadId, runId, queued, stream };
}

const positions = (threadId: string) =>
	Object.fromEntries(
		projection(threadId)
			.runs.filter((r) => r.status === "queued")
			.map((r) => [r.id, r.queuePosition]),
	);

describe("queued-run.reorder", () => {
	it("renumbers queuePosition 1..n, writes only the rows that moved, and runs in the new order", async () => {
		await start();
		const { threadId, runId, queued, stream } = await busy([
			"one",
			"two",
			"three",
		]);
		const [a, b, d] = queued as [string, string, string];
		expect(positions(threadId)).toEqual({ [a]: 1, [b]: 2, [d]: 3 });
		const mark = stream.items.length;
		const moved = await dispatchCommand(c, "queued-run.reorder", threadId, {
			runId: b,
			beforeRunId: null,
		});
		expect(moved._tag).toBe("Success");
		expect(positions(threadId)).toEqual({ [a]: 1, [d]: 2, [b]: 3 });
		await until(() =>
			stream.items
				.slice(mark)
				.some((i: Frame) => i.kind === "event" && i.event.payload?.id === b),
		);
		const updated = stream.items
			.slice(mark)
			.filter(
				(i: Frame) => i.kind === "event" && i.event.type === "run.updated",
			)
			.map((i: Frame) => i.event.payload.id);
		expect(updated.sort()).toEqual([b, d].sort());

		const first = await dispatchCommand(c, "queued-run.reorder", threadId, {
			runId: d,
			beforeRunId: a,
		});
		expect(first._tag).toBe("Success");
		expect(positions(threadId)).toEqual({ [d]: 1, [a]: 2, [b]: 3 });

		const running = await dispatchCommand(c, "queued-run.reorder", threadId, {
			runId,
			beforeRunId: null,
		});
		expect(failMessage(running)).toBe(`Run ${runId} is not queued.`);
		const target = await dispatchCommand(c, "queued-run.reorder", threadId, {
			runId: a,
			beforeRunId: runId,
		});
		expect(failMessage(target)).toBe(`Queue target ${runId} is not queued.`);
		const noKey = await dispatchCommand(c, "queued-run.reorder", threadId, {
			runId: a,
		});
		expect(noKey.cause[0]).toEqual({
			_tag: "Die",
			defect: 'Missing key\n  at ["beforeRunId"]',
		});

		sim.finishRun(threadId);
		await stream.waitFor(runEnded(b, "completed"));
		const started = (id: string) =>
			Date.parse(
				projection(threadId).runs.find((r) => r.id === id)?.startedAt as string,
			);
		expect(started(d)).toBeLessThanOrEqual(started(a));
		expect(started(a)).toBeLessThanOrEqual(started(b));
		const order = stream.items
			.filter(
				(i: Frame) =>
					i.kind === "event" &&
					i.event.type === "run.updated" &&
					i.event.payload.status === "starting",
			)
			.map((i: Frame) => i.event.payload.id);
		expect(order.filter((id: string) => id !== runId)).toEqual([d, a, b]);
	});
});

describe("queued-message.promote-to-steer", () => {
	it("cancels the queued run and steers its message into the running run", async () => {
		await start();
		const { threadId, runId, queued, stream } = await busy([
			"use the staging db",
		]);
		const [q] = queued as [string];
		const promoted = await dispatchCommand(
			c,
			"queued-message.promote-to-steer",
			threadId,
			{ queuedRunId: q, targetRunId: runId },
		);
		expect(promoted._tag).toBe("Success");
		const p = projection(threadId);
		expect(p.runs.find((r) => r.id === q)).toMatchObject({
			status: "cancelled",
			queuePosition: null,
		});
		expect(
			p.turnItems.find((i) => i.inputIntent === "promoted_queued_to_steer"),
		).toMatchObject({ type: "user_message", text: "use the staging db" });
		expect(
			p.messages.filter((m) => m.runId === runId && m.role === "user"),
		).toHaveLength(2);

		const again = await dispatchCommand(
			c,
			"queued-message.promote-to-steer",
			threadId,
			{ queuedRunId: q, targetRunId: runId },
		);
		expect(failMessage(again)).toBe(`Run ${q} is not queued.`);

		sim.finishRun(threadId);
		await stream.waitFor(runEnded(runId, "completed"));
		const reply = projection(threadId).messages.at(-1);
		expect(reply?.text).toContain("Also handled: use the staging db");
	});

	it("refuses a held queue and a target that is not running", async () => {
		await start();
		const { threadId, runId, queued, stream } = await busy(["later", "last"]);
		const [q, last] = queued as [string, string];
		const notRunning = await dispatchCommand(
			c,
			"queued-message.promote-to-steer",
			threadId,
			{ queuedRunId: q, targetRunId: last },
		);
		expect(failMessage(notRunning)).toBe(
			`Target run ${last} is no longer running.`,
		);
		await dispatchCommand(c, "run.interrupt", threadId, {
			runId,
			holdQueue: true,
		});
		await stream.waitFor(runEnded(runId, "interrupted"));
		const held = await dispatchCommand(
			c,
			"queued-message.promote-to-steer",
			threadId,
			{ queuedRunId: q, targetRunId: runId },
		);
		expect(failMessage(held)).toBe(
			`The queue of thread ${threadId} is held; resume it before promoting a queued message.`,
		);
		await dispatchCommand(c, "queue.resume", threadId);
		await stream.waitFor(runEnded(last, "completed"));
	});
});

describe("thread organisation", () => {
	it("pin, unpin, snooze, unsnooze and mark-unread keep their state on the thread", async () => {
		await start();
		const payload = launchPayload(projectId, "say hi");
		await c.call("orchestration.launchThread", payload);
		const threadId = payload.threadId as string;
		const thread = () => projection(threadId).thread;
		// Refused until a run completed (the run may already have, with 2 ms steps).
		const early = await dispatchCommand(c, "thread.mark-unread", threadId);
		if (early._tag !== "Success")
			expect(failMessage(early)).toBe(
				`Thread ${threadId} has no completed run to mark unread.`,
			);
		await until(() => projection(threadId).runs[0]?.status === "completed");

		const future = new Date(Date.now() + 3_600_000).toISOString();
		expect(
			(
				await dispatchCommand(c, "thread.snooze", threadId, {
					snoozedUntil: future,
				})
			)._tag,
		).toBe("Success");
		expect(thread().snoozedUntil).toBe(future);
		const past = await dispatchCommand(c, "thread.snooze", threadId, {
			snoozedUntil: "2001-01-01T00:00:00.000Z",
		});
		expect(failMessage(past)).toBe(
			"Snooze time 2001-01-01T00:00:00.000Z must be in the future.",
		);
		// A pin clears the snooze (and settled); a re-pin keeps its order key.
		await dispatchCommand(c, "thread.settle", threadId);
		expect((await dispatchCommand(c, "thread.pin", threadId))._tag).toBe(
			"Success",
		);
		const key = thread().pinOrderKey;
		expect(thread()).toMatchObject({
			pinnedAt: expect.any(String),
			pinOrderKey: expect.any(String),
			snoozedUntil: null,
			settledOverride: null,
		});
		await dispatchCommand(c, "thread.pin", threadId, { orderKey: "zz" });
		expect(thread().pinOrderKey).toBe(key);
		await dispatchCommand(c, "thread.unpin", threadId);
		expect(thread()).toMatchObject({ pinnedAt: null, pinOrderKey: null });

		await dispatchCommand(c, "thread.snooze", threadId, {
			snoozedUntil: future,
		});
		const noReason = await dispatchCommand(c, "thread.unsnooze", threadId);
		expect(noReason.cause[0]).toEqual({
			_tag: "Die",
			defect: 'Missing key\n  at ["reason"]',
		});
		await dispatchCommand(c, "thread.unsnooze", threadId, { reason: "user" });
		expect(thread().snoozedUntil).toBeNull();

		expect(
			(await dispatchCommand(c, "thread.mark-unread", threadId))._tag,
		).toBe("Success");
		const completedAt = projection(threadId).runs[0]?.completedAt as string;
		expect(thread().lastVisitedAt).toBe(
			new Date(Date.parse(completedAt) - 1).toISOString(),
		);

		await dispatchCommand(c, "thread.archive", threadId);
		const archivedPin = await dispatchCommand(c, "thread.pin", threadId);
		expect(failMessage(archivedPin)).toBe(
			`Thread ${threadId} is archived and cannot be pinned.`,
		);
	});

	it("refuses to snooze a thread with a queued run", async () => {
		await start();
		const { threadId, runId, stream, queued } = await busy(["next"]);
		const refused = await dispatchCommand(c, "thread.snooze", threadId, {
			snoozedUntil: new Date(Date.now() + 60_000).toISOString(),
		});
		expect(failMessage(refused)).toBe(
			`Thread ${threadId} cannot be snoozed while it has a queued run.`,
		);
		sim.finishRun(threadId);
		await stream.waitFor(runEnded(runId, "completed"));
		await stream.waitFor(runEnded(queued[0] as string, "completed"));
	});
});

describe("the pre-release engine", () => {
	it("has reorder, promote and snooze, but dies on pin, unpin and mark-unread", async () => {
		await start("prerelease");
		const { threadId, runId, queued, stream } = await busy(["one", "two"]);
		const [a, b] = queued as [string, string];
		for (const type of ["thread.pin", "thread.unpin", "thread.mark-unread"]) {
			const exit = await dispatchCommand(c, type, threadId);
			expect(exit.cause[0]._tag).toBe("Die");
			expect(exit.cause[0].defect).toStartWith("Expected ");
		}
		expect(projection(threadId).thread.pinnedAt).toBeUndefined();
		const reorder = await dispatchCommand(c, "queued-run.reorder", threadId, {
			runId: b,
			beforeRunId: a,
		});
		expect(reorder._tag).toBe("Success");
		expect(positions(threadId)).toEqual({ [b]: 1, [a]: 2 });
		sim.finishRun(threadId);
		await stream.waitFor(runEnded(runId, "completed"));
		await stream.waitFor(runEnded(a, "completed"));
	});
});
