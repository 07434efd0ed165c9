/**
 * The tracker on its own, with a fake machine: statuses the simulator cannot produce
 * (`rolled_back`) still map to their defined event, once, whatever replays the shell brings.
 */
import { describe, expect, test } from "bun:test";
import {
	FAKE_PROJECT,
	fakeFleet,
	fakeFleetOf,
	onlineStatus,
} from "../../test/helpers/fake-machine.ts";
import { createMetrics } from "../metrics/metrics.ts";
import { openDb } from "../store/db.ts";
import { createDispatchStore } from "../store/dispatches.ts";
import { createOutbox } from "../store/outbox.ts";
import { createThreadStore } from "../store/threads.ts";
import type { ThreadProjection, ThreadShell } from "../t3/model.ts";
import { silentLogger } from "../util/log.ts";
import { createTracker } from "./tracker.ts";

function setup(status: string) {
	const shell: ThreadShell = {
		id: "t1",
		projectId: "p1",
		title: "thread",
		latestRunId: "r1",
		activeRunId: null,
		status,
		pendingRuntimeRequest: null,
		latestVisibleMessage: null,
	};
	const projection: ThreadProjection = {
		thread: shell,
		runs: [
			{
				id: "r1",
				threadId: "t1",
				ordinal: 1,
				userMessageId: "m1",
				status,
				requestedAt: null,
				startedAt: null,
				completedAt: "2026-11-29T12:00:00.000Z",
			},
		],
		messages: [],
		turnItems: [],
		runtimeRequests: [],
		providerSessions: [],
	};
	const { fleet, emit } = fakeFleet(shell, projection);
	const db = openDb(":memory:");
	const threads = createThreadStore(db);
	const outbox = createOutbox(db);
	threads.upsert({
		threadId: "t1",
		machine: "m",
		projectId: "p1",
		title: "thread",
		origin: "conv",
		watched: true,
		now: 0,
	});
	const tracker = createTracker({
		fleet,
		db,
		threads,
		dispatches: createDispatchStore(db),
		outbox,
		metrics: createMetrics(),
		log: silentLogger,
		now: () => 0,
		onEmitted: () => {},
	});
	const shellUpdate = () =>
		emit({ kind: "thread", thread: shell, sequence: 2, previous: undefined });
	return { tracker, outbox, shellUpdate, fleet };
}

describe("terminal statuses without a simulator scenario", () => {
	test.each([
		["rolled_back", "thread.interrupted"],
		["cancelled", "thread.interrupted"],
	])(
		"%s → %s, exactly once across repeated shell updates",
		async (status, type) => {
			const { tracker, outbox, shellUpdate } = setup(status);
			tracker.start();
			shellUpdate();
			await tracker.idle();
			shellUpdate();
			await tracker.idle();
			tracker.stop();
			const rows = outbox.forThread("t1");
			expect(rows.map((r) => r.type)).toEqual([type]);
			expect(JSON.parse(rows[0]?.body ?? "{}")).toMatchObject({
				run_status: status,
				origin: "conv",
				thread_seq: 1,
			});
		},
	);
});

describe("a waiter woken by the same change answers before the commit", () => {
	test("promise chains started by the change run before the outbox row is written", async () => {
		const { tracker, outbox, shellUpdate, fleet } = setup("completed");
		tracker.start();
		// Registered after the tracker, like a t3_wait: a long chain of awaits (its reply).
		let rowsWhenAnswered = -1;
		fleet.list()[0]?.machine.onChange(() => {
			void (async () => {
				for (let i = 0; i < 100; i++) await Promise.resolve();
				rowsWhenAnswered = outbox.forThread("t1").length;
			})();
		});
		shellUpdate();
		await tracker.idle();
		tracker.stop();
		expect(rowsWhenAnswered).toBe(0);
		expect(outbox.forThread("t1").map((r) => r.type)).toEqual([
			"thread.completed",
		]);
	});
});

describe("catch-up", () => {
	test("threads as they were cost no record read or evaluation each; a changed one is evaluated", async () => {
		const idle = (id: string): ThreadShell => ({
			id,
			projectId: "p1",
			title: id,
			latestRunId: null,
			activeRunId: null,
			status: "idle",
			pendingRuntimeRequest: null,
			latestVisibleMessage: null,
		});
		const shells = new Map(
			Array.from({ length: 100 }, (_, i) => [`t${i}`, idle(`t${i}`)]),
		);
		const { fleet } = fakeFleetOf({
			status: () => onlineStatus("x"),
			projects: () => [FAKE_PROJECT],
			thread: (id: string) => shells.get(id),
			getThread: async () => {
				throw new Error("no read expected");
			},
		});
		const db = openDb(":memory:");
		const store = createThreadStore(db);
		for (const id of shells.keys())
			store.upsert({
				threadId: id,
				machine: "m",
				projectId: "p1",
				title: id,
				origin: null,
				watched: true,
				now: 0,
			});
		let reads = 0;
		const threads = {
			...store,
			get: (id: string) => {
				reads += 1;
				return store.get(id);
			},
		};
		// One thread seen mid-run before the restart: its record differs from the shell.
		store.observe(
			"t7",
			{ runId: "r0", status: "running", requestId: null, title: "t7" },
			0,
		);
		const tracker = createTracker({
			fleet,
			db,
			threads,
			dispatches: createDispatchStore(db),
			outbox: createOutbox(db),
			metrics: createMetrics(),
			log: silentLogger,
			now: () => 0,
			onEmitted: () => {},
		});
		tracker.start();
		await tracker.idle();
		tracker.stop();
		// Only t7 was evaluated (its run went away since: its outcome is to be read).
		expect(reads).toBe(1);
	});
});
