import { describe, expect, it } from "bun:test";
import { fakeFleetOf, onlineStatus } from "../../test/helpers/fake-machine.ts";
import type { ShellChange } from "../t3/machine-api.ts";
import { createManualClock } from "../util/clock.ts";
import { collectDuringBursts } from "./collect-garbage.ts";

const snapshot: ShellChange = { kind: "snapshot", sequence: 1 };
const synchronized: ShellChange = { kind: "synchronized", sequence: 1 };
const microtasks = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup() {
	const { fleet, emit } = fakeFleetOf({});
	const clock = createManualClock();
	let collections = 0;
	const stop = collectDuringBursts(fleet, {
		collect: () => {
			collections += 1;
		},
		every: 3,
		quietMs: 1_000,
		setTimer: (fn, ms) => clock.setTimer(fn, ms),
	});
	return { emit, clock, stop, collections: () => collections };
}

describe("collectDuringBursts", () => {
	it("collects after every few snapshots and catch-ups, after the current task", async () => {
		const { emit, collections } = setup();
		emit(snapshot);
		emit(synchronized);
		await microtasks();
		expect(collections()).toBe(0);
		emit(snapshot);
		// Not inside the listener: the snapshot's frame is still on the stack there.
		expect(collections()).toBe(0);
		await microtasks();
		expect(collections()).toBe(1);
		for (let i = 0; i < 6; i++) emit(i % 2 ? synchronized : snapshot);
		await microtasks();
		expect(collections()).toBe(3);
	});

	it("collects once when the burst is over, and never for other changes", async () => {
		const { emit, clock, collections } = setup();
		emit(snapshot);
		clock.advance(900);
		emit(synchronized);
		clock.advance(900);
		expect(collections()).toBe(0);
		clock.advance(100);
		expect(collections()).toBe(1);
		emit({
			kind: "state",
			status: onlineStatus(),
		});
		emit({ kind: "config" });
		clock.advance(5_000);
		await microtasks();
		expect(collections()).toBe(1);
	});

	it("stops listening and cancels the pending collection", async () => {
		const { emit, clock, stop, collections } = setup();
		emit(snapshot);
		stop();
		for (let i = 0; i < 5; i++) emit(snapshot);
		clock.advance(5_000);
		await microtasks();
		expect(collections()).toBe(0);
	});
});
