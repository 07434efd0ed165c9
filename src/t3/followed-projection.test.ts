import { describe, expect, test } from "bun:test";
import { decodeThreadProjection } from "./decode/projection.ts";
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
});
