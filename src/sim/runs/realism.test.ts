/**
 * The simulator's defaults model a real server (OBSERVED.md §5.6, §7; PROTOCOL.md §8.2): the
 * shell is coalesced in windows of up to 50 ms, the thread stream is not, a run passes through
 * `waiting` before `completed`, and the sim records the first frame that showed each outcome.
 * Time is the test's: a manual scheduler drives steps, the waiting phase and the windows.
 */
import { afterEach, describe, expect, it } from "bun:test";
import { startSim } from "../sim.ts";
import {
	connect,
	type Frame,
	firstProjectId,
	httpHeaders,
	launchPayload,
	manualScheduler,
	type RawClient,
} from "../test-client.ts";
import type { Sim } from "../types.ts";
import { wallMs } from "../wall-clock.ts";

let sim: Sim | undefined;
let client: RawClient | undefined;
afterEach(async () => {
	client?.close();
	await sim?.stop();
});

/** Everything the sim sent before this reaches us (a Ping's Pong comes after it). */
async function flushed(c: RawClient): Promise<void> {
	const pongs = c.received.filter((f) => f._tag === "Pong").length;
	c.send({ _tag: "Ping" });
	await c.waitFrame(
		() => c.received.filter((f) => f._tag === "Pong").length > pongs,
	);
}

describe("sim defaults", () => {
	it("coalesces the shell in 50 ms windows, streams the thread at once, and records the first outcome frame", async () => {
		const clock = manualScheduler();
		sim = await startSim({ scheduler: clock });
		const projectId = await firstProjectId(sim);
		const c = await connect(sim);
		client = c;
		const shell = c.stream("orchestration.subscribeShell", {
			requestCompletionMarker: true,
		});
		await shell.waitFor((i) => i.kind === "synchronized");
		const launch = launchPayload(projectId, "hello");
		const exit = await c.call("orchestration.launchThread", launch);
		expect(exit._tag).toBe("Success");
		const thread = c.stream("orchestration.subscribeThread", {
			threadId: launch.threadId,
			afterSequence: 0,
			requestCompletionMarker: true,
		});
		await thread.waitFor((i) => i.kind === "synchronized");
		const deltas = () =>
			shell.items.filter((i: Frame) => i.kind === "thread.updated");
		// The launch's changes wait for the window to close.
		await clock.advance(49);
		await flushed(c);
		expect(deltas()).toHaveLength(0);
		await clock.advance(1);
		await shell.waitFor((i) => i.kind === "thread.updated");
		expect(deltas()).toHaveLength(1);

		const runStatuses = () =>
			thread.items
				.filter((i: Frame) => String(i.event?.type).startsWith("run."))
				.map((i: Frame) => i.event.payload.status);
		for (let t = 0; t < 2_000 && !runStatuses().includes("completed"); t += 5)
			await clock.advance(5);
		await flushed(c);
		expect(runStatuses()).toEqual([
			"preparing",
			"starting",
			"running",
			"waiting",
			"completed",
		]);
		const runId = thread.items.find(
			(i: Frame) => i.event?.type === "run.updated",
		).event.payload.id;
		// The thread stream showed the outcome first.
		expect(sim.runOutcome(runId)).toMatchObject({
			runId,
			threadId: launch.threadId,
			status: "completed",
			via: "thread",
		});
		const outcome = sim.runOutcome(runId);
		expect(outcome?.sentAt).toBeGreaterThanOrEqual(outcome?.endedAt ?? 0);
		await clock.advance(50);
		await shell.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.status === "completed",
		);
		// Far fewer shell deltas than thread events: intermediate states were coalesced away.
		expect(deltas().length).toBeLessThan(runStatuses().length);
	});

	it("records the shell frame as the first when nobody follows the thread", async () => {
		const clock = manualScheduler();
		sim = await startSim({ scheduler: clock, stepMs: 1 });
		const projectId = await firstProjectId(sim);
		const c = await connect(sim);
		client = c;
		const shell = c.stream("orchestration.subscribeShell", {});
		const launch = launchPayload(projectId, "hello");
		await c.call("orchestration.launchThread", launch);
		for (let i = 0; i < 40; i++) await clock.advance(5);
		await shell.waitFor(
			(i) => i.kind === "thread.updated" && i.thread.status === "completed",
		);
		const [outcome] = sim.runOutcomes();
		expect(outcome).toMatchObject({ status: "completed", via: "shell" });
	});

	it("records an HTTP read as the first when it shows the outcome before any frame", async () => {
		const clock = manualScheduler();
		sim = await startSim({ scheduler: clock, stepMs: 1 });
		const projectId = await firstProjectId(sim);
		const c = await connect(sim);
		client = c;
		// Nobody streams: the runs end unseen.
		const launches = [
			launchPayload(projectId, "hello"),
			launchPayload(projectId, "hello"),
		];
		for (const launch of launches)
			expect((await c.call("orchestration.launchThread", launch))._tag).toBe(
				"Success",
			);
		for (let i = 0; i < 400 && sim.runOutcomes().length < 2; i++)
			await clock.advance(5);
		expect(sim.runOutcomes().map((o) => o.sentAt)).toEqual([
			undefined,
			undefined,
		]);
		const read = async (path: string) => {
			const res = await fetch(`${sim?.url}${path}`, {
				headers: httpHeaders(sim as Sim),
			});
			expect(res.status).toBe(200);
			return wallMs();
		};
		const outcomeOf = (threadId: string) =>
			sim?.runOutcomes().find((o) => o.threadId === threadId);
		const [first, second] = launches.map((l) => l.threadId) as [string, string];
		// The thread's projection shows its run's outcome: that answer is the floor.
		const firstReadAt = await read(`/api/orchestration/threads/${first}`);
		const one = outcomeOf(first);
		expect(one).toMatchObject({ status: "completed", via: "http" });
		expect(one?.sentAt).toBeGreaterThanOrEqual(one?.endedAt ?? Infinity);
		expect(one?.sentAt).toBeLessThanOrEqual(firstReadAt);
		expect(outcomeOf(second)?.sentAt).toBeUndefined();
		// So does the shell snapshot, for every thread it lists.
		await read("/api/orchestration/shell");
		expect(outcomeOf(second)).toMatchObject({ via: "http" });
		// A later frame does not move the floor.
		const sentAt = one?.sentAt;
		const shell = c.stream("orchestration.subscribeShell", {
			requestCompletionMarker: true,
		});
		await shell.waitFor((i) => i.kind === "synchronized");
		expect(outcomeOf(first)).toMatchObject({ via: "http", sentAt });
	});

	it("records a subscription's snapshot as the first when the run ended before it", async () => {
		const clock = manualScheduler();
		sim = await startSim({ scheduler: clock, stepMs: 1 });
		const projectId = await firstProjectId(sim);
		const c = await connect(sim);
		client = c;
		const launches = [
			launchPayload(projectId, "hello"),
			launchPayload(projectId, "hello"),
		];
		for (const launch of launches)
			await c.call("orchestration.launchThread", launch);
		for (let i = 0; i < 400 && sim.runOutcomes().length < 2; i++)
			await clock.advance(5);
		const [first, second] = launches.map((l) => l.threadId) as [string, string];
		const outcomeOf = (threadId: string) =>
			sim?.runOutcomes().find((o) => o.threadId === threadId);
		expect(outcomeOf(first)?.sentAt).toBeUndefined();
		// The thread stream's snapshot carries the finished run.
		const thread = c.stream("orchestration.subscribeThread", {
			threadId: first,
			requestCompletionMarker: true,
		});
		await thread.waitFor((i) => i.kind === "synchronized");
		expect(outcomeOf(first)).toMatchObject({ via: "thread" });
		expect(outcomeOf(first)?.sentAt).toBeGreaterThanOrEqual(
			outcomeOf(first)?.endedAt ?? Infinity,
		);
		expect(outcomeOf(second)?.sentAt).toBeUndefined();
		// So does the shell's, for every thread it lists.
		const shell = c.stream("orchestration.subscribeShell", {
			requestCompletionMarker: true,
		});
		await shell.waitFor((i) => i.kind === "synchronized");
		expect(outcomeOf(second)).toMatchObject({ via: "shell" });
	});
});
