import { describe, expect, test } from "bun:test";
import { BOUNDED_TURNS, boundedWindow } from "./bounded-window.ts";

const projection = (turns: number) => ({
	thread: { id: "t1" },
	runs: Array.from({ length: turns }, (_, i) => ({
		id: `r${i + 1}`,
		ordinal: i + 1,
		userMessageId: `u${i + 1}`,
	})),
	messages: Array.from({ length: turns }, (_, i) => [
		{ id: `u${i + 1}`, runId: null },
		{ id: `a${i + 1}`, runId: `r${i + 1}` },
	]).flat(),
	turnItems: Array.from({ length: turns }, (_, i) => ({
		id: `i${i + 1}`,
		runId: `r${i + 1}`,
	})),
	providerSessions: [{ id: "s1" }],
});

describe("bounded snapshot window", () => {
	test("a short thread comes whole, with no more history", () => {
		const w = boundedWindow(projection(BOUNDED_TURNS));
		expect(w.hasMoreHistory).toBe(false);
		expect(w.historyCursor).toBeNull();
		expect((w.projection.runs as unknown[]).length).toBe(BOUNDED_TURNS);
		expect(w.latestLocalTurnOrdinal).toBe(BOUNDED_TURNS);
	});

	test("a long thread keeps its latest turns and their rows, and says there is more", () => {
		const w = boundedWindow(projection(25));
		expect(w.hasMoreHistory).toBe(true);
		expect(w.historyCursor).toBe("turn:16");
		expect(w.latestLocalTurnOrdinal).toBe(25);
		const ids = (key: string) =>
			(w.projection[key] as { id: string }[]).map((r) => r.id);
		expect(ids("runs")).toEqual(
			Array.from({ length: 10 }, (_, i) => `r${i + 16}`),
		);
		expect(ids("messages")).toContain("u16");
		expect(ids("messages")).toContain("a25");
		expect(ids("messages")).not.toContain("u15");
		expect(ids("turnItems")).toHaveLength(10);
		expect(ids("providerSessions")).toEqual(["s1"]);
	});
});
