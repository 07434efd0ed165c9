import { describe, expect, test } from "bun:test";
import { decodeThreadProjection } from "../decode/projection.ts";
import { createFollowedProjection } from "./followed-projection.ts";

const run = (ordinal: number, status: string) => ({
	id: `r${ordinal}`,
	threadId: "t1",
	ordinal,
	userMessageId: `m${ordinal}`,
	status,
	requestedAt: null,
	startedAt: null,
	completedAt: null,
});

const projection = decodeThreadProjection({
	thread: { id: "t1", projectId: "p1", title: "thread" },
	runs: [run(1, "completed")],
	messages: [{ id: "m1", runId: "r1", role: "user", text: "hi" }],
	turnItems: [],
	runtimeRequests: [],
	providerSessions: [],
	visibleTurnItems: [{ id: "v1", text: "a derived timeline row" }],
});

describe("followed projection", () => {
	test("counts the rows it holds, as events add them", () => {
		const view = createFollowedProjection(projection);
		expect(view.rowCount()).toBe(2);
		view.apply({
			id: "e2",
			threadId: "t1",
			type: "run.created",
			payload: run(2, "running"),
		} as never);
		expect(view.rowCount()).toBe(3);
		// An upsert of a row it has replaces it.
		view.apply({
			id: "e3",
			threadId: "t1",
			type: "run.updated",
			payload: run(2, "completed"),
		} as never);
		expect(view.rowCount()).toBe(3);
	});

	test("serves the rows it follows and leaves out the snapshot's derived timeline", () => {
		const view = createFollowedProjection(projection);
		const served = view.projection() as unknown as Record<string, unknown>;
		expect(served.visibleTurnItems).toBeUndefined();
		expect((served.runs as unknown[]).length).toBe(1);
		expect((served.messages as unknown[]).length).toBe(1);
		expect(view.activity().status).toBe("completed");
	});

	test("a fork's inherited rows and marker stay (no event of the fork changes them); its own rows do not", () => {
		const row = (visibility: string, id: string) => ({
			position: 0,
			visibility,
			sourceThreadId: "src",
			sourceItemId: id,
			item: { id, type: "user_message", text: id, runId: null },
		});
		const view = createFollowedProjection(
			decodeThreadProjection({
				...projection,
				visibleTurnItems: [
					row("inherited", "i1"),
					row("synthetic", "marker"),
					row("local", "own"),
				],
			}),
		);
		const served = view.projection() as unknown as {
			visibleTurnItems: { sourceItemId: string }[];
		};
		expect(served.visibleTurnItems.map((r) => r.sourceItemId)).toEqual([
			"i1",
			"marker",
		]);
	});

	test("its latest message: the newest with text, kept current as messages stream in", () => {
		const view = createFollowedProjection(projection);
		expect(view.latestMessage()).toMatchObject({ id: "m1", text: "hi" });
		const message = (text: string, updatedAt: string) => ({
			id: "a1",
			threadId: "t1",
			type: "message.updated",
			payload: { id: "a1", runId: "r1", role: "assistant", text, updatedAt },
		});
		view.apply(message("", "2026-01-01T00:00:01Z") as never);
		expect(view.latestMessage()?.id).toBe("m1");
		view.apply(message("Working", "2026-01-01T00:00:02Z") as never);
		expect(view.latestMessage()).toEqual({
			id: "a1",
			role: "assistant",
			text: "Working",
			updatedAt: "2026-01-01T00:00:02Z",
		});
	});

	test("trimmed, it keeps the latest run, runs still going, pending requests and the thread's own rows", () => {
		const view = createFollowedProjection(
			decodeThreadProjection({
				thread: { id: "t1", projectId: "p1", title: "thread" },
				runs: [run(1, "completed"), run(2, "running"), run(3, "queued")],
				attempts: [
					{ id: "a1", runId: "r1" },
					{ id: "a3", runId: "r3" },
				],
				providerTurns: [
					{ id: "pt1", runAttemptId: "a1" },
					{ id: "pt3", runAttemptId: "a3" },
				],
				messages: [
					{ id: "m1", runId: "r1", role: "user", text: "old" },
					{ id: "m2", runId: "r2", role: "user", text: "question" },
				],
				turnItems: [
					{ id: "i1", runId: "r1", type: "assistant_message", text: "old" },
					{ id: "i2", runId: "r2", type: "user_input", requestId: "q2" },
				],
				runtimeRequests: [
					{ id: "q1", runId: "r1", kind: "user-input", status: "resolved" },
					{ id: "q2", runId: "r2", kind: "approval", status: "pending" },
				],
				providerSessions: [{ id: "s1", status: "ready" }],
				providerThreads: [{ id: "pth1" }],
				checkpoints: [{ id: "c1", runId: "r1" }],
			}),
		);
		const before = view.activity();
		view.trimToRecent();
		const p = view.projection() as unknown as Record<string, { id: string }[]>;
		const ids = (name: string) => (p[name] ?? []).map((r) => r.id);
		// r3 is the latest, r2 is running with a pending request; r1 is history.
		expect(ids("runs")).toEqual(["r2", "r3"]);
		expect(ids("attempts")).toEqual(["a3"]);
		expect(ids("providerTurns")).toEqual(["pt3"]);
		expect(ids("messages")).toEqual(["m2"]);
		expect(ids("turnItems")).toEqual(["i2"]);
		expect(ids("runtimeRequests")).toEqual(["q2"]);
		expect(ids("providerSessions")).toEqual(["s1"]);
		expect(ids("providerThreads")).toEqual(["pth1"]);
		expect(ids("checkpoints")).toEqual([]);
		expect(view.activity()).toEqual(before);
		expect(view.rowCount()).toBe(9);
	});
});
