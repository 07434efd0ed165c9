import { expect, test } from "bun:test";
import type { Run, ThreadProjection } from "../../t3/model.ts";
import { afterRefusal, runningTarget } from "./queue-order.ts";

const projection = (runs: Partial<Run>[]) =>
	({ runs }) as unknown as ThreadProjection;

test("promote_queued steers into the newest running run; without one it says what to do", () => {
	expect(
		runningTarget(
			projection([
				{ id: "r1", ordinal: 1, status: "completed" },
				{ id: "r2", ordinal: 2, status: "running" },
				{ id: "r3", ordinal: 3, status: "queued" },
			]),
			"t",
		).id,
	).toBe("r2");
	const none = () =>
		runningTarget(
			projection([
				{ id: "r1", ordinal: 1, status: "completed" },
				{ id: "r2", ordinal: 2, status: "queued" },
			]),
			"t",
		);
	expect(none).toThrow('no run of thread "t" is running');
	expect(none).toThrow("dispatch it normally with t3_dispatch");
	expect(() =>
		runningTarget(
			projection([
				{ id: "r1", ordinal: 1, status: "starting" },
				{ id: "r2", ordinal: 2, status: "queued" },
			]),
			"t",
		),
	).toThrow("retry in a moment");
	expect(() =>
		runningTarget(
			projection([
				{ id: "r1", ordinal: 1, status: "waiting" },
				{ id: "r2", ordinal: 2, status: "queued" },
			]),
			"t",
		),
	).toThrow("t3_answer");
});

test("T3's refusals of reorder and promote become what to do", () => {
	expect(
		afterRefusal(
			"The queue of thread t is held; resume it before promoting a queued message.",
		),
	).toContain('action "resume_queue"');
	expect(afterRefusal("Target run r2 is no longer running.")).toContain(
		"dispatch the message normally with t3_dispatch",
	);
	expect(afterRefusal("Run r3 is not queued.")).toContain("t3_thread queued");
	expect(afterRefusal("Queue target r4 is not queued.")).toContain(
		"t3_thread queued",
	);
	expect(afterRefusal("Thread t is archived.")).toContain('"unarchive"');
	expect(afterRefusal("something else")).toContain("t3_thread");
});
