/**
 * The delivery worker against a real loopback receiver, with a manual clock: retry timing,
 * Retry-After, 410 and exhaustion to dead letters, per-thread order, compaction. No sleeping.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../../test/helpers/receiver.ts";
import { createMetrics } from "../metrics/metrics.ts";
import { openDb } from "../store/db.ts";
import { createOutbox, type Outbox } from "../store/outbox.ts";
import { createManualClock } from "../util/clock.ts";
import { silentLogger } from "../util/log.ts";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery.ts";

let receiver: Receiver;
let outbox: Outbox;
let clock: ReturnType<typeof createManualClock>;
let worker: DeliveryWorker;
let seq = 0;

function start(
	schedule = [5, 30, 120],
	url?: string,
	isHidden?: (threadId: string) => boolean,
) {
	worker = createDeliveryWorker(
		{ url: url ?? receiver.url, token: "t", secret: TEST_SECRET, schedule },
		{
			outbox,
			clock,
			random: () => 0.5,
			metrics: createMetrics(),
			log: silentLogger,
			isHidden,
		},
	);
	worker.start();
}

function emit(threadId: string, type = "thread.completed"): string {
	seq++;
	const id = `evt_${String(seq).padStart(4, "0")}`;
	outbox.insert({
		id,
		thread_id: threadId,
		thread_seq: seq,
		dedupe_key: `k${seq}`,
		type,
		origin: "conv",
		body: JSON.stringify({ id, type, thread_id: threadId, thread_seq: seq }),
		created_at: clock.now(),
	});
	worker.wake();
	return id;
}

/** Moves the manual clock and lets the attempts it triggered finish. */
async function advance(ms: number) {
	clock.advance(ms);
	await worker.idle();
}

beforeEach(() => {
	receiver = startReceiver();
	outbox = createOutbox(openDb(":memory:"));
	// Start at real time: receivers reject signatures with timestamps off by more than 5 minutes.
	clock = createManualClock(Date.now());
	seq = 0;
});
afterEach(async () => {
	await worker.stop();
	await receiver.stop();
});

describe("delivery", () => {
	test("rows committed but not yet on disk are not sent until they are", async () => {
		let synced: (() => void) | undefined;
		let gate: Promise<void> | undefined = new Promise<void>((resolve) => {
			synced = () => {
				gate = undefined;
				resolve();
			};
		});
		worker = createDeliveryWorker(
			{ url: receiver.url, token: "t", secret: TEST_SECRET, schedule: [5] },
			{
				outbox,
				clock,
				random: () => 0.5,
				metrics: createMetrics(),
				log: silentLogger,
				commits: {
					run: async (write) => write(),
					unsynced: () => gate,
					drained: async () => {},
				},
			},
		);
		worker.start();
		emit("t1");
		await worker.idle();
		expect(receiver.attempts()).toBe(0);
		synced?.();
		await Promise.resolve();
		await Promise.resolve();
		await worker.idle();
		expect(receiver.deliveries.map((d) => d.body.thread_id)).toEqual(["t1"]);
	});

	test("a row whose sync has ended is sent while a newer row is still being synced", async () => {
		const syncs: { resolve: () => void; done: boolean }[] = [];
		const sync = () => {
			let resolve = () => {};
			const promise = new Promise<void>((r) => {
				resolve = r;
			});
			const entry = { resolve: () => {}, done: false, promise };
			entry.resolve = () => {
				entry.done = true;
				resolve();
			};
			syncs.push(entry);
			return entry;
		};
		// What GroupCommit.unsynced() gives: the syncs in flight when asked.
		const inFlight = () => {
			const open = (syncs as ReturnType<typeof sync>[]).filter((x) => !x.done);
			return open.length ? Promise.all(open.map((x) => x.promise)) : undefined;
		};
		worker = createDeliveryWorker(
			{ url: receiver.url, token: "t", secret: TEST_SECRET, schedule: [5] },
			{
				outbox,
				clock,
				random: () => 0.5,
				metrics: createMetrics(),
				log: silentLogger,
				commits: {
					run: async (write) => write(),
					unsynced: () => inFlight()?.then(() => {}),
					drained: async () => {},
				},
			},
		);
		worker.start();
		const first = sync();
		emit("t1");
		// Under load the next outcome is committed (its sync starts) before the first sync ends.
		const second = sync();
		emit("t2");
		await worker.idle();
		expect(receiver.attempts()).toBe(0);
		first.resolve();
		await new Promise((r) => setImmediate(r));
		await worker.idle();
		expect(receiver.deliveries.map((d) => d.body.thread_id)).toEqual(["t1"]);
		second.resolve();
		await new Promise((r) => setImmediate(r));
		await worker.idle();
		expect(receiver.deliveries.map((d) => d.body.thread_id)).toEqual([
			"t1",
			"t2",
		]);
	});

	test("a hidden thread's events are held, not sent; released, they go in order", async () => {
		const hidden = new Set(["secret"]);
		start([5], undefined, (id) => hidden.has(id));
		emit("secret");
		emit("secret");
		emit("open");
		await worker.idle();
		expect(receiver.deliveries.map((d) => d.body.thread_id)).toEqual(["open"]);
		expect(outbox.forThread("secret").map((r) => r.status)).toEqual([
			"held",
			"held",
		]);
		// Held rows are not due: nothing is attempted for them later either.
		await advance(3_600_000);
		expect(receiver.attempts()).toBe(1);
		hidden.clear();
		expect(outbox.release("secret")).toBe(2);
		worker.wake();
		await worker.idle();
		await advance(0);
		expect(
			receiver.deliveries.map((d) => [d.body.thread_id, d.body.thread_seq]),
		).toEqual([
			["open", 3],
			["secret", 1],
			["secret", 2],
		]);
	});

	test("2xx delivers once, signed, with the stable id", async () => {
		start();
		const id = emit("th1");
		await worker.idle();
		expect(receiver.deliveries).toHaveLength(1);
		expect(receiver.deliveries[0]?.verified).toBe(true);
		expect(receiver.deliveries[0]?.headers["webhook-id"]).toBe(id);
		expect(outbox.forThread("th1")[0]?.status).toBe("delivered");
	});

	test("failures retry exactly on the schedule (5 s, 30 s, 2 min), then dead-letter", async () => {
		receiver.setMode({ status: 503 });
		start([5, 30, 120]);
		emit("th1");
		await worker.idle();
		expect(receiver.attempts()).toBe(1);
		await advance(4_999);
		expect(receiver.attempts()).toBe(1);
		await advance(1);
		expect(receiver.attempts()).toBe(2);
		await advance(29_999);
		expect(receiver.attempts()).toBe(2);
		await advance(1);
		expect(receiver.attempts()).toBe(3);
		await advance(120_000);
		expect(receiver.attempts()).toBe(4);
		const [row] = outbox.forThread("th1");
		expect(row?.status).toBe("dead");
		expect(row?.last_error).toBe("HTTP 503: no");
		await advance(3_600_000);
		expect(receiver.attempts()).toBe(4);
	});

	test("a receiver down for a while gets everything afterwards, in order", async () => {
		receiver.setMode({ status: 502 });
		start([5, 30, 120, 600]);
		emit("th1");
		emit("th1");
		emit("th2");
		await worker.idle();
		// One attempt per thread head: th1's second event waits behind its first.
		expect(receiver.attempts()).toBe(2);
		receiver.setMode("ok");
		await advance(5_000);
		// In order per thread; threads go in parallel, so th2 may land before or after th1's second.
		const seqs = (thread: string) =>
			receiver.deliveries
				.filter((d) => d.body.thread_id === thread)
				.map((d) => d.body.thread_seq);
		expect(seqs("th1")).toEqual([1, 2]);
		expect(seqs("th2")).toEqual([3]);
		expect(receiver.deliveries.length).toBe(3);
	});

	test("Retry-After wins when it asks for longer than the schedule", async () => {
		receiver.setMode({ status: 429, retryAfter: "60" });
		start([5, 30]);
		emit("th1");
		await worker.idle();
		receiver.setMode("ok");
		await advance(59_999);
		expect(receiver.deliveries).toHaveLength(0);
		await advance(1);
		expect(receiver.deliveries).toHaveLength(1);
	});

	test("410 dead-letters at once and unblocks the thread's next event", async () => {
		receiver.setMode({ status: 410 });
		start();
		emit("th1");
		await worker.idle();
		expect(outbox.forThread("th1")[0]?.status).toBe("dead");
		receiver.setMode("ok");
		emit("th1");
		await worker.idle();
		expect(receiver.deliveries.map((d) => d.body.thread_seq)).toEqual([2]);
	});

	test("without a hook URL events stay pending, nothing is sent", async () => {
		worker = createDeliveryWorker(
			{ url: undefined, token: undefined, secret: undefined, schedule: [5] },
			{ outbox, clock, metrics: createMetrics(), log: silentLogger },
		);
		worker.start();
		emit("th1");
		await advance(60_000);
		expect(receiver.attempts()).toBe(0);
		expect(outbox.forThread("th1")[0]?.status).toBe("pending");
	});

	test("delivered rows are compacted after the retention period", async () => {
		start();
		emit("th1");
		await worker.idle();
		expect(outbox.forThread("th1")).toHaveLength(1);
		await advance(8 * 24 * 3600_000);
		expect(outbox.forThread("th1")).toHaveLength(0);
	});
});

describe("bookkeeping failures", () => {
	test("an outcome that cannot be recorded pauses deliveries instead of re-sending in a loop", async () => {
		const real = outbox;
		let failing = true;
		outbox = {
			...real,
			markDelivered: (id, now) => {
				if (failing) throw new Error("database or disk is full");
				real.markDelivered(id, now);
			},
		};
		start();
		emit("th1");
		await worker.idle();
		expect(receiver.attempts()).toBe(1);
		await advance(4_999);
		expect(receiver.attempts()).toBe(1);
		failing = false;
		await advance(1);
		expect(receiver.attempts()).toBe(2);
		expect(real.forThread("th1")[0]?.status).toBe("delivered");
	});
});
