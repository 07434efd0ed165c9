import { describe, expect, test } from "bun:test";
import {
	FAKE_PROJECT,
	fakeFleetOf,
	onlineStatus,
} from "../../../test/helpers/fake-machine.ts";
import { openDb } from "../../store/db.ts";
import { createDispatchStore } from "../../store/dispatches.ts";
import { createOperationStore } from "../../store/operations.ts";
import { createThreadStore } from "../../store/threads.ts";
import type { Run, ThreadProjection, ThreadShell } from "../../t3/model.ts";
import { silentLogger } from "../../util/log.ts";
import type { ThreadDeps } from "../deps.ts";
import { createModelCatalog } from "../dispatch/model-catalog.ts";
import { interrupt, queuedRuns } from "./interrupt.ts";

const run = (id: string, ordinal: number, queuePosition?: number | null) =>
	({ id, ordinal, status: "queued", queuePosition }) as unknown as Run;
const projection = (runs: Run[]) => ({ runs }) as unknown as ThreadProjection;

test("queued follow-ups in T3's delivery order (queuePosition), not by ordinal", () => {
	// Reordered in T3's app: the newest follow-up goes first.
	const ids = queuedRuns(
		projection([run("r2", 2, 3), run("r3", 3, 1), run("r4", 4, 2)]),
	).map((r) => r.run_id);
	expect(ids).toEqual(["r3", "r4", "r2"]);
});

test("without queuePosition (the pre-release engine) by ordinal", () => {
	const ids = queuedRuns(projection([run("r3", 3), run("r2", 2)])).map(
		(r) => r.run_id,
	);
	expect(ids).toEqual(["r2", "r3"]);
});

/** A fleet whose one thread reads `before`, then `after` once a command was sent. */
function machineWith(
	shell: ThreadShell,
	before: ThreadProjection,
	after: ThreadProjection = before,
) {
	const sent: Record<string, unknown>[] = [];
	const { fleet } = fakeFleetOf({
		status: () => onlineStatus("x"),
		projects: () => [FAKE_PROJECT],
		threads: () => [shell],
		thread: (id: string) => (id === shell.id ? shell : undefined),
		getThread: async () => ({
			snapshotSequence: 1,
			projection: sent.length > 0 ? after : before,
		}),
		dispatch: async (command: Record<string, unknown>) => {
			sent.push(command);
			return { sequence: 2 };
		},
	});
	const db = openDb(":memory:");
	const deps: ThreadDeps = {
		fleet,
		db,
		threads: createThreadStore(db),
		dispatches: createDispatchStore(db),
		operations: createOperationStore(db),
		catalog: createModelCatalog(fleet),
		settings: { waitTimeoutS: 600 },
		log: silentLogger,
		now: () => 0,
		newId: () => crypto.randomUUID(),
	};
	return { deps, sent };
}

const threadShell = (fields: Partial<ThreadShell> = {}): ThreadShell => ({
	id: "t1",
	projectId: FAKE_PROJECT.id,
	title: "t",
	latestRunId: "r1",
	activeRunId: null,
	status: "completed",
	pendingRuntimeRequest: null,
	latestVisibleMessage: null,
	...fields,
});
const threadRun = (id: string, ordinal: number, status: string) =>
	({ id, ordinal, status, userMessageId: `m${ordinal}` }) as unknown as Run;
const detail = (runs: Run[], providerThreads: unknown[] = []) =>
	({
		thread: threadShell(),
		runs,
		messages: [],
		turnItems: [],
		runtimeRequests: [],
		providerSessions: [],
		providerThreads,
	}) as unknown as ThreadProjection;
const withTasks = (...taskIds: string[]) => [
	{
		id: "pt",
		pendingBackgroundTasks: taskIds.map((taskId) => ({ taskId })),
	},
];

describe("what t3_interrupt stops", () => {
	test("only background work left: the latest, settled run, as T3's Stop does", async () => {
		const { deps, sent } = machineWith(
			threadShell({ backgroundTaskCount: 1 }),
			detail([threadRun("r1", 1, "completed")], withTasks("a")),
			detail([threadRun("r1", 1, "completed")], withTasks()),
		);
		const { result, note } = await interrupt(deps, "t1");
		expect(sent).toMatchObject([{ type: "run.interrupt", runId: "r1" }]);
		expect(result).toMatchObject({
			run_id: "r1",
			run_status: "completed",
			interrupted: true,
		});
		expect(note).toBe(
			"Run r1 had already ended; T3 was asked to stop the 1 background task it left running, and lists none now.",
		);
	});

	test("never a waiting run: its turn is over, nothing is sent", async () => {
		const { deps, sent } = machineWith(
			// A shell that names the waiting run (as one counting `waiting` would).
			threadShell({ activeRunId: "r1", status: "waiting" }),
			detail([threadRun("r1", 1, "waiting")]),
		);
		const { result, note } = await interrupt(deps, "t1");
		expect(sent).toEqual([]);
		expect(result).toMatchObject({ run_id: "r1", interrupted: false });
		expect(note).toContain("its turn is over");
	});

	test("a run in flight wins over a waiting one and over background work", async () => {
		const { deps, sent } = machineWith(
			threadShell({ activeRunId: "r1", backgroundTaskCount: 2 }),
			detail([threadRun("r1", 1, "waiting"), threadRun("r2", 2, "running")]),
		);
		await interrupt(deps, "t1");
		expect(sent).toMatchObject([{ type: "run.interrupt", runId: "r2" }]);
	});

	test("a settled thread without background work: nothing to interrupt", async () => {
		const { deps, sent } = machineWith(
			threadShell(),
			detail([threadRun("r1", 1, "completed")]),
		);
		expect((await interrupt(deps, "t1")).result.interrupted).toBe(false);
		expect(sent).toEqual([]);
	});
});
