import { describe, expect, test } from "bun:test";
import type { ThreadShell } from "../t3/model.ts";
import {
	type CountedThread,
	createRunSlots,
	type RunCap,
	UNSEEN_SEND_MS,
} from "./run-slots.ts";

const shellOf = (
	id: string,
	status: ThreadShell["status"],
	latestRunId: string | null,
): ThreadShell =>
	({
		id,
		projectId: "p",
		title: id,
		latestRunId,
		activeRunId: status === "idle" ? null : latestRunId,
		status,
		pendingRuntimeRequest: null,
		latestVisibleMessage: null,
	}) as ThreadShell;

function world() {
	let now = 0;
	const shells = new Map<string, ThreadShell>();
	let synced = true;
	const counted: CountedThread[] = [];
	const slots = createRunSlots(
		{
			shell: (_m, id) => (synced ? shells.get(id) : "unknown"),
		},
		() => now,
	);
	const cap = (n: number, key = "client:a"): RunCap => ({
		key,
		cap: n,
		threads: () => counted,
		refuse: (holding) => new Error(`full: ${holding.join(",")}`),
	});
	return {
		slots,
		cap,
		shells,
		counted,
		tick: (ms: number) => {
			now += ms;
		},
		setSynced: (on: boolean) => {
			synced = on;
		},
	};
}

describe("run slots", () => {
	test("slots taken at once never exceed the cap; a refusal names the holders", () => {
		const w = world();
		const taken = [w.slots.take([w.cap(3)]), w.slots.take([w.cap(3)])];
		taken.push(w.slots.take([w.cap(3)]));
		expect(() => w.slots.take([w.cap(3)])).toThrow("3 being dispatched");
		taken[0]?.release();
		expect(() => w.slots.take([w.cap(3)])).not.toThrow();
	});

	test("a sent slot is held until the shell shows the run, then the shell counts it", () => {
		const w = world();
		const slot = w.slots.take([w.cap(1)]);
		slot.bind("t1", "m");
		slot.sent();
		w.counted.push({ threadId: "t1", machine: "m" });
		expect(() => w.slots.take([w.cap(1)])).toThrow("t1");
		w.shells.set("t1", shellOf("t1", "running", "r1"));
		expect(w.slots.pending("client:a")).toBe(0);
		expect(() => w.slots.take([w.cap(1)])).toThrow("t1");
		w.shells.set("t1", shellOf("t1", "idle", "r1"));
		expect(() => w.slots.take([w.cap(1)])).not.toThrow();
	});

	test("a message into a busy or already held thread adds nothing", () => {
		const w = world();
		w.shells.set("t1", shellOf("t1", "running", "r1"));
		w.counted.push({ threadId: "t1", machine: "m" });
		const steer = w.slots.take([w.cap(1)], { threadId: "t1", machine: "m" });
		steer.sent();
		w.shells.set("t2", shellOf("t2", "idle", "r0"));
		w.counted.push({ threadId: "t2", machine: "m" });
		const two = world();
		two.shells.set("t2", shellOf("t2", "idle", "r0"));
		two.slots.take([two.cap(1)], { threadId: "t2", machine: "m" });
		// A second follow-up into the same idle thread, sent at once: still one thread.
		expect(() =>
			two.slots.take([two.cap(1)], { threadId: "t2", machine: "m" }),
		).not.toThrow();
		expect(() => two.slots.take([two.cap(1)])).toThrow("t2");
	});

	test("a slot is taken in every cap or in none", () => {
		const w = world();
		w.slots.take([w.cap(1, "machine:m")]);
		expect(() =>
			w.slots.take([w.cap(5, "client:a"), w.cap(1, "machine:m")]),
		).toThrow();
		expect(w.slots.pending("client:a")).toBe(0);
	});

	test("a send the shell never shows is given back once the synchronized shell lacks it", () => {
		const w = world();
		const slot = w.slots.take([w.cap(1)]);
		slot.bind("t9", "m");
		slot.sent();
		w.setSynced(false);
		w.tick(UNSEEN_SEND_MS * 2);
		expect(() => w.slots.take([w.cap(1)])).toThrow();
		w.setSynced(true);
		expect(() => w.slots.take([w.cap(1)])).not.toThrow();
	});

	test("while a machine's shell is not synchronized, the stored status counts", () => {
		const w = world();
		w.counted.push({ threadId: "t1", machine: "m", storedStatus: "running" });
		w.setSynced(false);
		expect(() => w.slots.take([w.cap(1)])).toThrow("t1");
		w.setSynced(true);
		expect(() => w.slots.take([w.cap(1)])).not.toThrow();
	});
});
