/**
 * Thread following on its own, over a fake machine whose streams the test feeds: the stream's
 * rows win over an older shell, reads are served from memory only while current, a drop
 * resumes after the last sequence, and the bound falls back visibly.
 */
import { describe, expect, test } from "bun:test";
import { onlineStatus } from "../../../test/helpers/fake-machine.ts";
import { silentLogger } from "../../util/log.ts";
import type { Machine, MachineStreamEnd, ShellChange } from "../machine-api.ts";
import type { ThreadShell } from "../model.ts";
import type { KeptViews } from "./kept-views.ts";
import {
	createKeptThreadViews,
	followThreads,
	type KeptView,
} from "./thread-follow.ts";

interface FakeStream {
	payload: Record<string, unknown>;
	push(...values: unknown[]): void;
	end(end: MachineStreamEnd): void;
	cancelled: boolean;
}

const shell = (status: string, runId = "r1"): ThreadShell => ({
	id: "t1",
	projectId: "p1",
	title: "thread",
	latestRunId: runId,
	activeRunId: status === "completed" ? null : runId,
	status,
	pendingRuntimeRequest: null,
	latestVisibleMessage: null,
});

const run = (status: string, ordinal = 1) => ({
	id: `r${ordinal}`,
	threadId: "t1",
	ordinal,
	userMessageId: `m${ordinal}`,
	status,
	requestedAt: null,
	startedAt: null,
	completedAt: null,
});

const snapshot = (sequence: number, runs: unknown[]) => ({
	kind: "snapshot",
	snapshotSequence: sequence,
	projection: {
		thread: { id: "t1", projectId: "p1", title: "thread" },
		runs,
		messages: [],
		turnItems: [],
		runtimeRequests: [],
		providerSessions: [],
	},
});

const event = (sequence: number, type: string, payload: unknown) => ({
	kind: "event",
	sequence,
	event: { id: `e${sequence}`, threadId: "t1", type, payload },
});

function setup(
	maxThreads = 256,
	behindMs = 250,
	keptViews?: KeptViews<KeptView>,
) {
	let current: ThreadShell | undefined = shell("running");
	const listeners = new Set<(change: ShellChange) => void>();
	const streams: FakeStream[] = [];
	let gets = 0;
	let fallbacks = 0;
	const inner = {
		name: "m",
		url: "http://127.0.0.1:1",
		status: () => onlineStatus(),
		projects: () => [],
		threads: () => (current ? [current] : []),
		thread: (id: string) => (id === "t1" ? current : undefined),
		sequence: () => 0,
		onChange(listener: (change: ShellChange) => void) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		getThread: async () => {
			gets++;
			return {
				snapshotSequence: 0,
				projection: snapshot(0, []).projection,
			};
		},
		dispatch: async () => ({ sequence: 50 }),
		openStream(
			_tag: string,
			payload: Record<string, unknown>,
			onItem: (v: unknown) => void,
			onEnd: (e: MachineStreamEnd) => void,
		) {
			const s: FakeStream = {
				payload,
				push: (...values) => {
					for (const v of values) onItem(v);
				},
				end: onEnd,
				cancelled: false,
			};
			streams.push(s);
			return {
				cancel() {
					s.cancelled = true;
				},
			};
		},
	} as unknown as Machine;
	const machine = followThreads(inner, {
		log: silentLogger,
		maxThreads,
		behindMs,
		onFallback: () => fallbacks++,
		...(keptViews ? { keptViews } : {}),
	});
	const changes: ShellChange[] = [];
	machine.onChange((c) => changes.push(c));
	const shellChange = (thread: ThreadShell, sequence: number) => {
		current = thread;
		for (const l of listeners)
			l({ kind: "thread", thread, sequence, previous: undefined });
	};
	return {
		machine,
		streams,
		changes,
		shellChange,
		emitInner: (change: ShellChange) => {
			for (const l of listeners) l(change);
		},
		gets: () => gets,
		fallbacks: () => fallbacks,
		/** The coalesced shell has not shown the thread yet (it was just created). */
		shellUnaware: () => {
			current = undefined;
		},
	};
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("thread following", () => {
	test("the stream's terminal run shows before the shell does, and reads come from memory", async () => {
		const t = setup(256, 1);
		t.shellChange(shell("running"), 10);
		t.machine.follow?.("t1");
		const s = t.streams[0] as FakeStream;
		expect(s.payload).toEqual({
			acceptBoundedSnapshot: true,
			threadId: "t1",
			requestCompletionMarker: true,
		});
		s.push(snapshot(10, [run("running")]), { kind: "synchronized" });
		s.push(event(12, "run.updated", run("waiting")));
		s.push(event(14, "run.updated", run("completed")));
		await tick();
		expect(t.machine.thread("t1")?.status).toBe("completed");
		const last = t.changes.at(-1);
		expect(last?.kind === "thread" && last.thread.status).toBe("completed");
		const detail = await t.machine.getThread("t1");
		expect(detail.projection.runs[0]?.status).toBe("completed");
		expect(t.gets()).toBe(0);
		// The coalesced shell still says `waiting` with an older sequence: the stream wins.
		t.shellChange(shell("waiting"), 12);
		expect(t.machine.thread("t1")?.status).toBe("completed");
		// A shell newer than the stream wins, and reads go to T3 again once the stream has not
		// caught up within `behindMs`.
		t.shellChange(shell("running", "r2"), 20);
		expect(t.machine.thread("t1")?.latestRunId).toBe("r2");
		await t.machine.getThread("t1");
		expect(t.gets()).toBe(1);
	});

	test("a bounded window answers only the readers it covers; others GET the whole history", async () => {
		const t = setup(256, 0);
		t.shellChange(shell("running", "r12"), 10);
		t.machine.follow?.("t1");
		const s = t.streams[0] as FakeStream;
		// Turns 3..12 of 12: older ones left out.
		const window = Array.from({ length: 10 }, (_, i) =>
			run(i === 9 ? "running" : "completed", i + 3),
		);
		s.push(
			{ ...snapshot(10, window), hasMoreHistory: true, historyCursor: "c" },
			{ kind: "synchronized" },
		);
		s.push(event(12, "run.updated", run("completed", 12)));
		await tick();
		expect(t.machine.thread("t1")?.status).toBe("completed");
		const covers = (from: number) => (p: { runs: { ordinal: number }[] }) =>
			Math.min(...p.runs.map((r) => r.ordinal)) <= from;
		const recent = await t.machine.getThread("t1", { covers: covers(11) });
		expect(recent.projection.runs.at(-1)?.status).toBe("completed");
		expect(t.gets()).toBe(0);
		await t.machine.getThread("t1", { covers: covers(2) });
		await t.machine.getThread("t1");
		expect(t.gets()).toBe(2);
	});

	test("a thread the shell has not shown yet reads as the stream shows it, as its change said", async () => {
		const t = setup();
		t.shellUnaware();
		t.machine.follow?.("t1");
		const s = t.streams[0] as FakeStream;
		s.push(snapshot(10, [run("running")]), { kind: "synchronized" });
		s.push(event(14, "run.updated", run("completed")));
		await tick();
		const last = t.changes.at(-1);
		expect(last?.kind === "thread" && last.thread.status).toBe("completed");
		expect(t.machine.thread("t1")).toMatchObject({
			id: "t1",
			status: "completed",
			latestRunId: "r1",
		});
		// Not followed: nothing to say about a thread the shell does not know.
		expect(t.machine.thread("t2")).toBeUndefined();
	});

	test("a read after our own command waits for the stream to show it (read your writes)", async () => {
		const t = setup();
		t.machine.follow?.("t1");
		const s = t.streams[0] as FakeStream;
		s.push(snapshot(10, [run("completed")]), { kind: "synchronized" });
		await t.machine.dispatch({
			type: "message.dispatch",
			commandId: "c1",
			threadId: "t1",
		});
		// The read waits for the stream to show the command's rows, not for a GET.
		const read = t.machine.getThread("t1");
		await tick();
		s.push(event(50, "run.created", run("starting", 2)));
		const detail = await read;
		expect(detail.projection.runs).toHaveLength(2);
		expect(t.gets()).toBe(0);
	});

	test("a read of a stream behind the shell is served by the stream's next frames, without a GET", async () => {
		const t = setup();
		t.shellChange(shell("running"), 10);
		t.machine.follow?.("t1");
		const s = t.streams[0] as FakeStream;
		s.push(snapshot(10, [run("running")]), { kind: "synchronized" });
		// Under load the coalesced shell shows the outcome first; the stream's frame is on its way.
		t.shellChange(shell("completed"), 14);
		const read = t.machine.getThread("t1");
		await tick();
		s.push(event(12, "run.updated", run("waiting")));
		await tick();
		expect(t.gets()).toBe(0);
		s.push(event(14, "run.updated", run("completed")));
		const detail = await read;
		expect(detail.projection.runs[0]?.status).toBe("completed");
		expect(t.gets()).toBe(0);
		// behindMs 0: no waiting, a GET at once (the shell is ahead again).
		const eager = setup(256, 0);
		eager.shellChange(shell("running"), 10);
		eager.machine.follow?.("t1");
		(eager.streams[0] as FakeStream).push(snapshot(10, [run("running")]), {
			kind: "synchronized",
		});
		eager.shellChange(shell("completed"), 14);
		await eager.machine.getThread("t1");
		expect(eager.gets()).toBe(1);
	});

	test("a thread followed again resumes after what it showed before, without a snapshot", async () => {
		const t = setup(1);
		const release = t.machine.follow?.("t1");
		const first = t.streams[0] as FakeStream;
		first.push(snapshot(10, [run("completed")]), { kind: "synchronized" });
		release?.();
		// Another thread takes the only slot: t1's stream closes, its view is kept.
		const releaseOther = t.machine.follow?.("t2");
		expect(first.cancelled).toBe(true);
		releaseOther?.();
		t.shellChange(shell("running", "r2"), 12);
		t.machine.follow?.("t1");
		const again = t.streams.at(-1) as FakeStream;
		expect(again.payload).toEqual({
			acceptBoundedSnapshot: true,
			threadId: "t1",
			requestCompletionMarker: true,
			afterSequence: 10,
		});
		again.push(event(12, "run.created", run("running", 2)), {
			kind: "synchronized",
		});
		const detail = await t.machine.getThread("t1");
		expect(detail.projection.runs.map((r) => [r.id, r.status])).toEqual([
			["r1", "completed"],
			["r2", "running"],
		]);
		expect(t.gets()).toBe(0);
	});

	test("a view trimmed past the kept budget still resumes; whole-thread reads then GET, recent ones do not", async () => {
		// A budget under the kept view (2 runs, ~1 150 bytes) and over its latest run's (~880):
		// the view is trimmed to that run.
		const t = setup(1, 250, createKeptThreadViews(1_000, 1_000));
		const release = t.machine.follow?.("t1");
		const first = t.streams[0] as FakeStream;
		first.push(snapshot(10, [run("completed"), run("completed", 2)]), {
			kind: "synchronized",
		});
		release?.();
		t.machine.follow?.("t2")?.();
		expect(first.cancelled).toBe(true);
		t.shellChange(shell("running", "r3"), 12);
		t.machine.follow?.("t1");
		const again = t.streams.at(-1) as FakeStream;
		expect(again.payload.afterSequence).toBe(10);
		again.push(event(12, "run.created", run("running", 3)), {
			kind: "synchronized",
		});
		const recent = await t.machine.getThread("t1", {
			covers: (p) => p.runs.some((r) => r.id === "r3"),
		});
		expect(recent.projection.runs.map((r) => r.id)).toEqual(["r2", "r3"]);
		expect(t.gets()).toBe(0);
		await t.machine.getThread("t1");
		expect(t.gets()).toBe(1);
	});

	test("a dropped stream resumes after its last sequence once the machine is back", async () => {
		const t = setup();
		t.machine.follow?.("t1");
		const first = t.streams[0] as FakeStream;
		first.push(snapshot(10, [run("running")]), { kind: "synchronized" });
		first.push(event(11, "run.updated", run("running")));
		first.end({ ok: false, kind: "disconnected" });
		expect(t.streams).toHaveLength(1);
		t.emitInner({ kind: "synchronized", sequence: 30 });
		const second = t.streams[1] as FakeStream;
		expect(second.payload).toEqual({
			acceptBoundedSnapshot: true,
			threadId: "t1",
			requestCompletionMarker: true,
			afterSequence: 11,
		});
		// Replays overlap: an event at or below the cursor is dropped.
		second.push(
			event(11, "run.updated", run("failed")),
			event(13, "run.updated", run("completed")),
			{ kind: "synchronized" },
		);
		await tick();
		expect(t.machine.thread("t1")?.status).toBe("completed");
		expect(t.fallbacks()).toBe(0);
	});

	test("a stream that cannot resume starts over from a snapshot, then falls back to the shell", () => {
		const t = setup();
		t.machine.follow?.("t1");
		(t.streams[0] as FakeStream).push(snapshot(10, []), {
			kind: "synchronized",
		});
		(t.streams[0] as FakeStream).end({ ok: false, kind: "disconnected" });
		t.emitInner({ kind: "synchronized", sequence: 30 });
		(t.streams[1] as FakeStream).end({ ok: false, kind: "fail" });
		expect((t.streams[2] as FakeStream).payload.afterSequence).toBeUndefined();
		(t.streams[2] as FakeStream).end({ ok: false, kind: "fail" });
		expect(t.streams).toHaveLength(3);
		expect(t.fallbacks()).toBe(1);
		expect(t.machine.followStats?.().live).toBe(0);
	});

	test("beyond the bound a thread is not followed, visibly; a released one makes room", () => {
		const t = setup(1);
		const release = t.machine.follow?.("t1");
		t.machine.follow?.("t2");
		expect(t.streams).toHaveLength(1);
		expect(t.fallbacks()).toBe(1);
		expect(t.machine.followStats?.()).toMatchObject({
			followed: 1,
			fallbacks: 1,
		});
		release?.();
		t.machine.follow?.("t2");
		expect(t.streams).toHaveLength(2);
		expect((t.streams[0] as FakeStream).cancelled).toBe(true);
		expect(t.fallbacks()).toBe(1);
	});

	test("a pending request shows once its turn item (the question) has arrived too", async () => {
		const t = setup();
		t.machine.follow?.("t1");
		const s = t.streams[0] as FakeStream;
		s.push(snapshot(10, [run("running")]), { kind: "synchronized" });
		s.push(
			event(11, "runtime-request.updated", {
				id: "q1",
				kind: "user_input",
				status: "pending",
			}),
		);
		await tick();
		expect(t.machine.thread("t1")?.pendingRuntimeRequest).toBeNull();
		s.push(
			event(12, "turn-item.updated", {
				id: "i1",
				type: "user_input_request",
				runId: "r1",
				requestId: "q1",
				questions: [{ id: "c", question: "Which?", options: [] }],
			}),
		);
		await tick();
		expect(t.machine.thread("t1")?.pendingRuntimeRequest?.id).toBe("q1");
	});
});
