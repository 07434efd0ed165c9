import { describe, expect, test } from "bun:test";
import type { Run, ThreadProjection, ThreadShell } from "../model.ts";
import {
	interruptibleRun,
	projectionBackgroundTasks,
	stopTarget,
} from "./stop-target.ts";

const run = (id: string, ordinal: number, status: string) =>
	({ id, ordinal, status }) as unknown as Run;
const shell = (fields: Partial<ThreadShell> = {}) =>
	({ activeRunId: null, ...fields }) as ThreadShell;
const projection = (
	runs: Run[],
	providerThreads: unknown[] = [],
	activeProviderThreadId: string | null = null,
) =>
	({
		thread: { activeProviderThreadId },
		runs,
		providerThreads,
	}) as unknown as ThreadProjection;
const roster = (id: string, ...taskIds: string[]) => ({
	id,
	pendingBackgroundTasks: taskIds.map((taskId) => ({
		taskId,
		kind: "command",
	})),
});

describe("the run T3's Stop interrupts", () => {
	test("the newest run in flight, never a waiting one", () => {
		const p = projection([
			run("r1", 1, "waiting"),
			run("r2", 2, "running"),
			run("r3", 3, "queued"),
		]);
		expect(interruptibleRun(p, shell())?.id).toBe("r2");
		// A shell naming the waiting run (as a derivation counting `waiting` would) is not followed.
		expect(interruptibleRun(p, shell({ activeRunId: "r1" }))?.id).toBe("r2");
		expect(
			interruptibleRun(projection([run("r1", 1, "waiting")]), shell()),
		).toBeNull();
	});

	test("the shell's activeRunId while the projection shows it in flight", () => {
		const p = projection([run("r1", 1, "starting"), run("r2", 2, "running")]);
		expect(interruptibleRun(p, shell({ activeRunId: "r1" }))?.id).toBe("r1");
	});
});

describe("with only background work left", () => {
	test("the latest settled run, counted from the shell or from the rosters", () => {
		const runs = [run("r1", 1, "completed")];
		expect(
			stopTarget(projection(runs), shell({ backgroundTaskCount: 2 })),
		).toMatchObject({ kind: "background", tasks: 2, run: { id: "r1" } });
		expect(
			stopTarget(projection(runs, [roster("pt", "a", "b", "a")]), shell()),
		).toMatchObject({ kind: "background", tasks: 2 });
		expect(stopTarget(projection(runs), shell())).toBeNull();
	});

	test("only the active provider thread's roster, only once the latest run settled", () => {
		const threads = [roster("pt-old", "x"), roster("pt", "a")];
		expect(
			projectionBackgroundTasks(
				projection([run("r1", 1, "completed")], threads, "pt"),
			),
		).toEqual(["a"]);
		for (const status of ["waiting", "running", "rolled_back", "queued"])
			expect(
				projectionBackgroundTasks(projection([run("r1", 1, status)], threads)),
			).toEqual([]);
		// A run in flight is what Stop takes, background work or not.
		expect(
			stopTarget(
				projection([run("r1", 1, "completed"), run("r2", 2, "running")]),
				shell({ backgroundTaskCount: 1 }),
			),
		).toMatchObject({ kind: "run", run: { id: "r2" } });
	});
});
