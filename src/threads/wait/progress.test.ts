/**
 * `t3_wait` progress with an injected clock and no network: the elapsed time counts from the
 * run's start (35 s into a run, a wait that just began says 35 s, not 0), the line names the run's
 * current step (masked like all T3 text), and the timeout's text says the same.
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
	FAKE_PROJECT,
	fakeFleetOf,
	onlineStatus,
} from "../../../test/helpers/fake-machine.ts";
import { openDb } from "../../store/db.ts";
import { createDispatchStore } from "../../store/dispatches.ts";
import { createOperationStore } from "../../store/operations.ts";
import { createThreadStore } from "../../store/threads.ts";
import type {
	ThreadProjection,
	ThreadShell,
	TurnItem,
} from "../../t3/model.ts";
import { waitToolResult } from "../../tools/threads/wait-results.ts";
import { createManualClock } from "../../util/clock.ts";
import { silentLogger } from "../../util/log.ts";
import {
	clearSecretsForTest,
	MASK,
	registerSecrets,
} from "../../util/redact.ts";
import type { ThreadDeps } from "../deps.ts";
import { createModelCatalog } from "../dispatch/model-catalog.ts";
import { statusLine } from "./progress.ts";
import { waitForThreads } from "./wait.ts";

const SECRET = "sk-progress-secret-0123456789";

afterEach(() => clearSecretsForTest());

const shell: ThreadShell = {
	id: "t1",
	projectId: FAKE_PROJECT.id,
	title: "busy",
	latestRunId: "r2",
	activeRunId: "r2",
	status: "running",
	pendingRuntimeRequest: null,
	latestVisibleMessage: { role: "assistant", text: "Looking at the tests" },
};

function item(
	id: string,
	ordinal: number,
	fields: Partial<TurnItem>,
): TurnItem {
	return { id, runId: "r2", ordinal, type: "command_execution", ...fields };
}

/** A thread whose run r2 started 35 s before `now`, after an earlier run r1. */
function setup(startedAgoMs = 35_000) {
	const clock = createManualClock();
	const iso = (ms: number) => new Date(clock.now() - ms).toISOString();
	const projection: ThreadProjection = {
		thread: shell,
		runs: [
			{
				id: "r1",
				threadId: "t1",
				ordinal: 1,
				userMessageId: "m1",
				status: "completed",
				requestedAt: iso(600_000),
				startedAt: iso(600_000),
				completedAt: iso(500_000),
			},
			{
				id: "r2",
				threadId: "t1",
				ordinal: 2,
				userMessageId: "m2",
				status: "running",
				requestedAt: iso(startedAgoMs + 2_000),
				startedAt: iso(startedAgoMs),
				completedAt: null,
			},
		],
		messages: [],
		turnItems: [
			item("u", 1, { type: "user_message", text: "run the tests" }),
			item("c", 2, { input: "bun test", status: "running" }),
			item("a", 3, { type: "assistant_message", text: "Looking at the tests" }),
		],
		runtimeRequests: [],
		providerSessions: [],
	};
	let followed: ThreadProjection | null = projection;
	const { fleet } = fakeFleetOf({
		status: () => onlineStatus("x"),
		projects: () => [FAKE_PROJECT],
		threads: () => [shell],
		thread: (id: string) => (id === shell.id ? shell : undefined),
		getThread: async () => ({ snapshotSequence: 1, projection }),
		followedProjection: () => followed,
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
		now: () => clock.now(),
		clock,
		newId: () => crypto.randomUUID(),
		progressIntervalMs: 10_000,
	};
	const entry = fleet.list()[0] as ReturnType<typeof fleet.list>[number];
	return {
		clock,
		deps,
		projection,
		entry,
		unfollow: () => {
			followed = null;
		},
	};
}

/** Progress lines as they come; `next()` resolves with the next one. */
function progressLines() {
	const lines: string[] = [];
	const waiting: ((line: string) => void)[] = [];
	return {
		lines,
		report: async (line: string) => {
			lines.push(line);
			waiting.shift()?.(line);
		},
		next: () =>
			new Promise<string>((resolve) => {
				waiting.push(resolve);
			}),
	};
}

describe("t3_wait progress", () => {
	test("counts from the run's start, not the wait's, and names the current step", async () => {
		const { clock, deps } = setup();
		const progress = progressLines();
		const first = progress.next();
		const waited = waitForThreads(deps, ["t1"], {
			timeoutS: 60,
			progress: progress.report,
		});
		expect(await first).toBe(
			"running, 35 s elapsed since the run started; step: bun test; latest: Looking at the tests",
		);
		clock.advance(10_000);
		expect(progress.lines.at(-1)).toStartWith(
			"running, 45 s elapsed since the run started; step: bun test",
		);
		clock.advance(10_000);
		expect(progress.lines).toHaveLength(3);
		expect(progress.lines.at(-1)).toStartWith("running, 55 s elapsed");

		// The timeout (60 s of waiting) reports the wait's elapsed_s, and its text the run's time.
		clock.advance(40_000);
		const report = await waited;
		expect(report.outcome).toBe("timeout");
		expect(report.elapsed_s).toBe(60);
		expect(report.progress).toBe(
			"running, 95 s elapsed since the run started; step: bun test; latest: Looking at the tests",
		);
		const result = waitToolResult(report);
		expect(result.structuredContent).not.toHaveProperty("progress");
		const text = result.content.map((c) => (c.type === "text" ? c.text : ""));
		expect(text[1]).toContain(
			"Now: running, 95 s elapsed since the run started; step: bun test",
		);
		// Nothing left running on the clock once the wait ended.
		expect(clock.pending()).toBe(0);
	});

	test("the step is the latest tool or activity, masked like all T3 text", () => {
		const { deps, projection, entry } = setup();
		registerSecrets([SECRET]);
		projection.turnItems.push(
			item("n", 4, {
				type: "system_notice",
				message: `Deploying with ${SECRET}\nsecond line`,
			}),
			item("a2", 5, { type: "assistant_message", text: "still going" }),
		);
		const line = statusLine(
			{ entry, threadId: "t1" },
			{ now: deps.now(), waitedS: 0, runId: "r2" },
		);
		expect(line).toContain(`step: Deploying with ${MASK};`);
		expect(line).not.toContain(SECRET);
		expect(line).not.toContain("second line");
		projection.turnItems.push(
			item("p", 6, { type: "file_change", fileName: "src/app.ts" }),
		);
		expect(
			statusLine({ entry, threadId: "t1" }, { now: deps.now(), waitedS: 0 }),
		).toContain("step: src/app.ts;");
	});

	test("a run not started yet counts from its request; an unfollowed thread says its start is not known", () => {
		const { deps, projection, entry, unfollow } = setup();
		const run = projection.runs[1] as (typeof projection.runs)[number];
		run.startedAt = null;
		run.status = "queued";
		const at = { now: deps.now(), waitedS: 3 };
		expect(statusLine({ entry, threadId: "t1" }, at)).toContain(
			"37 s elapsed since the run was requested",
		);
		unfollow();
		expect(statusLine({ entry, threadId: "t1" }, at)).toBe(
			"running, 3 s elapsed waiting (the run's start is not known here); latest: Looking at the tests",
		);
	});
});
