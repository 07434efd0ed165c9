import { expect, test } from "bun:test";
import { openDb } from "./db.ts";
import { createOutbox } from "./outbox.ts";

test("due rows are each thread's head only, in due order, however many wait behind them", () => {
	const db = openDb(":memory:");
	const outbox = createOutbox(db);
	const row = (id: string, thread: string, seq: number, at: number) =>
		outbox.insert({
			id,
			thread_id: thread,
			thread_seq: seq,
			dedupe_key: id,
			type: "thread.completed",
			origin: null,
			body: "{}",
			created_at: at,
		});
	row("a1", "A", 1, 10);
	row("a2", "A", 2, 20);
	row("b1", "B", 1, 30);
	row("c1", "C", 1, 5);
	outbox.markDelivered("c1", 40);
	// A's head failed and waits until 100: its successor, due long before, must not overtake it.
	outbox.markRetry("a1", 100, "HTTP 500");
	const ids = (now: number, limit = 10) =>
		outbox.due(now, limit).map((r) => r.id);
	expect(ids(60)).toEqual(["b1"]);
	expect(outbox.nextDueAt()).toBe(30);
	expect(ids(200)).toEqual(["b1", "a1"]);
	expect(ids(200, 1)).toEqual(["b1"]);
	outbox.markDelivered("b1", 61);
	expect(outbox.nextDueAt()).toBe(100);
	outbox.markDelivered("a1", 101);
	expect(ids(200)).toEqual(["a2"]);
	db.close();
});
