import { describe, expect, it } from "bun:test";
import { fakeFleetOf, onlineStatus } from "../../test/helpers/fake-machine.ts";
import type { ShellChange } from "../t3/machine-api.ts";
import { createManualClock } from "../util/clock.ts";
import { collectDuringBursts, stormSchedule } from "./collect-garbage.ts";

const snapshot: ShellChange = { kind: "snapshot", sequence: 1 };
const synchronized: ShellChange = { kind: "synchronized", sequence: 1 };
const microtasks = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(checkEvery = 1) {
	const { fleet, emit } = fakeFleetOf({});
	const clock = createManualClock();
	let collections = 0;
	let full = 0;
	// A heap that grows 10 MB with every snapshot or catch-up and shrinks to 50 MB when collected.
	let heap = 50;
	let reads = 0;
	const stop = collectDuringBursts(fleet, {
		collect: () => {
			collections += 1;
			heap = 50;
		},
		collectFully: () => {
			full += 1;
			heap = 50;
		},
		memorySize: () => {
			reads += 1;
			return heap * 2 ** 20;
		},
		checkEvery,
		growthBytes: 25 * 2 ** 20,
		quietMs: 1_000,
		setTimer: (fn, ms) => clock.setTimer(fn, ms),
	});
	const grow = (change: ShellChange) => {
		heap += 10;
		emit(change);
	};
	return {
		emit: grow,
		clock,
		stop,
		collections: () => collections,
		full: () => full,
		reads: () => reads,
	};
}

describe("collectDuringBursts", () => {
	it("collects the young generation once the heap has grown enough over snapshots and catch-ups, after the current task", async () => {
		const { emit, collections, full } = setup();
		emit(snapshot);
		emit(synchronized);
		await microtasks();
		expect(collections()).toBe(0);
		emit(snapshot);
		// Not inside the listener: the snapshot's frame is still on the stack there.
		expect(collections()).toBe(0);
		await microtasks();
		expect(collections()).toBe(1);
		// Snapshots arrive on tasks of their own; within one task a single collection is queued.
		for (let i = 0; i < 6; i++) {
			emit(i % 2 ? synchronized : snapshot);
			await microtasks();
		}
		expect(collections()).toBe(3);
		emit(snapshot);
		emit(snapshot);
		emit(snapshot);
		await microtasks();
		expect(collections()).toBe(4);
		// Full collections of the growing heap only once the storm is over.
		expect(full()).toBe(0);
	});

	it("reads the heap's size only at every few changes (the read is not free)", async () => {
		const { emit, collections, reads } = setup(4);
		const before = reads();
		for (let i = 0; i < 3; i++) emit(snapshot);
		await microtasks();
		expect(reads() - before).toBe(0);
		expect(collections()).toBe(0);
		emit(snapshot);
		await microtasks();
		expect(collections()).toBe(1);
	});

	it("collects fully once when the burst is over, and never for other changes", async () => {
		const { emit, clock, collections, full } = setup();
		emit(snapshot);
		clock.advance(900);
		emit(synchronized);
		clock.advance(900);
		expect(full()).toBe(0);
		clock.advance(100);
		expect(full()).toBe(1);
		emit({
			kind: "state",
			status: onlineStatus(),
		});
		emit({ kind: "config" });
		clock.advance(5_000);
		await microtasks();
		expect(full()).toBe(1);
		expect(collections()).toBe(0);
	});

	it("stops listening and cancels the pending collection", async () => {
		const { emit, clock, stop, collections, full } = setup();
		emit(snapshot);
		stop();
		for (let i = 0; i < 5; i++) emit(snapshot);
		clock.advance(5_000);
		await microtasks();
		expect(collections()).toBe(0);
		expect(full()).toBe(0);
	});
});

describe("stormSchedule", () => {
	it("allows 16 MB at every fourth change up to 50 machines, less as the fleet grows, never under 1 MB", () => {
		const MB = 2 ** 20;
		expect(stormSchedule(1)).toEqual({ growthBytes: 16 * MB, checkEvery: 4 });
		expect(stormSchedule(50)).toEqual({ growthBytes: 16 * MB, checkEvery: 4 });
		expect(stormSchedule(100)).toEqual({ growthBytes: 8 * MB, checkEvery: 2 });
		expect(stormSchedule(500)).toEqual({
			growthBytes: Math.round(1.6 * MB),
			checkEvery: 1,
		});
		expect(stormSchedule(5_000)).toEqual({ growthBytes: MB, checkEvery: 1 });
	});
});
