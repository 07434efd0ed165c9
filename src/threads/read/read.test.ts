/**
 * t3_thread's size discipline without a network: a fake machine serves a projection with huge
 * texts; the result caps them with the visible marker and stays within its budget.
 */
import { describe, expect, test } from "bun:test";
import { fakeFleet } from "../../../test/helpers/fake-machine.ts";
import { openDb } from "../../store/db.ts";
import { createDispatchStore } from "../../store/dispatches.ts";
import { createOperationStore } from "../../store/operations.ts";
import { createThreadStore } from "../../store/threads.ts";
import { TRUNCATION_MARKER } from "../../t3/derive/derive.ts";
import type { ThreadProjection, ThreadShell } from "../../t3/model.ts";
import { silentLogger } from "../../util/log.ts";
import type { ThreadDeps } from "../deps.ts";
import { createModelCatalog } from "../dispatch/model-catalog.ts";
import { readThread } from "./read.ts";

const shell: ThreadShell = {
	id: "t1",
	projectId: "p1",
	title: "big",
	latestRunId: "r20",
	activeRunId: null,
	status: "completed",
	pendingRuntimeRequest: null,
	latestVisibleMessage: null,
};

function projection(runs: number, textChars: number): ThreadProjection {
	const big = "x".repeat(textChars);
	return {
		thread: shell,
		runs: Array.from({ length: runs }, (_, i) => ({
			id: `r${i + 1}`,
			threadId: "t1",
			ordinal: i + 1,
			userMessageId: `m${i + 1}`,
			status: "completed",
			requestedAt: null,
			startedAt: null,
			completedAt: null,
		})),
		messages: [],
		turnItems: Array.from({ length: runs }, (_, i) => [
			{
				id: `u${i}`,
				type: "user_message",
				runId: `r${i + 1}`,
				ordinal: i * 2,
				text: big,
			},
			{
				id: `a${i}`,
				type: "assistant_message",
				runId: `r${i + 1}`,
				ordinal: i * 2 + 1,
				text: big,
				streaming: false,
			},
		]).flat(),
		runtimeRequests: [],
		providerSessions: [],
	};
}

function depsFor(detail: ThreadProjection): ThreadDeps {
	const { fleet } = fakeFleet(shell, detail);
	const db = openDb(":memory:");
	return {
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
}

describe("t3_thread result size", () => {
	test("one long run: texts capped at 8 000 characters with the marker", async () => {
		const result = await readThread(depsFor(projection(1, 50_000)), "t1", 1);
		const text = result.runs[0]?.messages[1]?.text ?? "";
		expect(text.length).toBeLessThanOrEqual(8_000);
		expect(text.endsWith(TRUNCATION_MARKER)).toBe(true);
	});

	test("twenty long runs: caps tighten so the whole result stays under ~20k tokens", async () => {
		const result = await readThread(depsFor(projection(20, 50_000)), "t1", 20);
		expect(result.runs).toHaveLength(20);
		expect(JSON.stringify(result).length).toBeLessThan(80_000);
		expect(
			result.runs.every((r) =>
				r.messages.every((m) => m.text.endsWith(TRUNCATION_MARKER)),
			),
		).toBe(true);
	});

	test("short texts are left whole", async () => {
		const result = await readThread(depsFor(projection(3, 100)), "t1", 3);
		expect(result.runs.map((r) => r.messages[1]?.text.length)).toEqual([
			100, 100, 100,
		]);
	});
});
