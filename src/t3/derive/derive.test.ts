import { describe, expect, it } from "bun:test";
import {
	loadCapture,
	readCaptureJson,
	recordedCalls,
	summaryNotes,
} from "../../../test/replay/captures.ts";
import {
	decodeThreadDetail,
	decodeThreadProjection,
} from "../decode/projection.ts";
import type { ThreadProjection } from "../model.ts";
import {
	capText,
	finalAssistantMessage,
	findRunByMessageId,
	latestRun,
	pendingQuestion,
	questionOptionValue,
	runDetails,
	runError,
	runOutcome,
	TRUNCATION_MARKER,
} from "./derive.ts";
import { runFailure } from "./run-failure.ts";

/** The full thread after every capture ran (real server, OBSERVED.md §8). */
function finalProjection(): ThreadProjection {
	return decodeThreadDetail(readCaptureJson("http-after-recovery-thread.json"))
		.projection;
}

/** messageIds our capture script sent with message.dispatch, in order. */
function dispatchedMessageIds(capture: string): string[] {
	return recordedCalls(loadCapture(capture))
		.filter(
			(c) =>
				c.tag === "orchestration.dispatchCommand" &&
				c.payload.type === "message.dispatch",
		)
		.map((c) => String(c.payload.messageId));
}

describe("runOutcome", () => {
	it("maps every status", () => {
		expect(runOutcome("completed")).toBe("completed");
		for (const s of ["interrupted", "cancelled", "rolled_back"])
			expect(runOutcome(s)).toBe("interrupted");
		expect(runOutcome("failed")).toBe("failed");
		for (const s of [
			"preparing",
			"queued",
			"starting",
			"running",
			"waiting",
			"idle",
			"future",
		]) {
			expect(runOutcome(s)).toBeNull();
		}
	});
});

describe("derive from the captured projections", () => {
	const cases: [capture: string, index: number][] = [
		["ws-question.jsonl", 0],
		["ws-interrupt.jsonl", 0],
		["ws-fail.jsonl", 0],
		["ws-busy.jsonl", 0],
		["ws-busy.jsonl", 1],
		["ws-busy.jsonl", 2],
		["ws-approval.jsonl", 0],
		["ws-stream-enabled.jsonl", 0],
		["ws-continuation.jsonl", 0],
	];
	for (const [capture, index] of cases) {
		it(`${capture} run #${index + 1}: outcome and final message match the capture's summary`, () => {
			const projection = finalProjection();
			const messageId = dispatchedMessageIds(capture)[index];
			expect(messageId).toBeDefined();
			const run = findRunByMessageId(projection, messageId as string);
			const summary = summaryNotes(loadCapture(capture))[index] as {
				run: { id: string; status: string };
				assistantTexts: { text: string }[];
			};
			expect(run?.id).toBe(summary.run.id);
			expect(run?.status).toBe(summary.run.status);
			expect(runOutcome(run?.status ?? "")).toBe(
				runOutcome(summary.run.status),
			);
			expect(finalAssistantMessage(projection, run?.id ?? "")).toBe(
				summary.assistantTexts.at(-1)?.text ?? null,
			);
		});
	}

	it("failed run: error text from the error turn item", () => {
		const projection = finalProjection();
		const run = findRunByMessageId(
			projection,
			dispatchedMessageIds("ws-fail.jsonl")[0] as string,
		);
		expect(runOutcome(run?.status ?? "")).toBe("failed");
		expect(runError(projection, run?.id ?? "")).toBe("fake codex failure");
		const completed = findRunByMessageId(
			projection,
			dispatchedMessageIds("ws-question.jsonl")[0] as string,
		);
		expect(runError(projection, completed?.id ?? "")).toBeNull();
		// A completed run has no error, whatever the shell's lastError says.
		expect(
			runError(projection, completed?.id ?? "", {
				...projection.thread,
				lastError: "shell says no",
			}),
		).toBeNull();
	});

	it("latestRun is the highest ordinal; the server-stop run is cancelled → interrupted", () => {
		const run = latestRun(finalProjection());
		expect(run?.ordinal).toBe(13);
		expect(runOutcome(run?.status ?? "")).toBe("interrupted");
	});

	it("no pending question once everything is resolved", () => {
		expect(pendingQuestion(finalProjection())).toBeNull();
		expect(pendingQuestion(finalProjection(), null)).toBeNull();
	});

	it("a pending pre-release question: text from the turn item, label answers", () => {
		const projection = finalProjection();
		const request = projection.runtimeRequests.find(
			(r) => r.kind === "user_input",
		);
		expect(request).toBeDefined();
		const pending = {
			...projection,
			runtimeRequests: projection.runtimeRequests.map((r) =>
				r === request ? { ...r, status: "pending" } : r,
			),
		};
		const q = pendingQuestion(pending);
		expect(q).toEqual({
			request_id: request?.id as string,
			kind: "user_input",
			request_kind: "user_input",
			prompt: "Which color should I use?",
			answerable: true,
			reason: null,
			// A live request (the capture's codex): only message-mode requests may be dismissed.
			dismissable: false,
			questions: [
				{
					id: "color",
					header: "Color",
					text: "Which color should I use?",
					options: ["Red", "Blue"],
					multi_select: false,
					allow_custom: true,
					// Pre-release questions have no `required`: every one must be answered.
					required: true,
				},
			],
			decisions: null,
			app_name: null,
			decision_wire: {},
		});
		// Pre-release options have no value: answer with the label.
		expect(
			questionOptionValue(pending, request?.id as string, "color", "Red"),
		).toBe("Red");
		// The shell's pendingRuntimeRequest alone is enough to find it while it is pending…
		expect(
			pendingQuestion(withPending(projection, request?.id as string), {
				id: request?.id as string,
				kind: "user_input",
			})?.questions,
		).toHaveLength(1);
		// …but a shell lagging behind a projection that shows it resolved reports nothing.
		expect(
			pendingQuestion(projection, {
				id: request?.id as string,
				kind: "user_input",
			}),
		).toBeNull();
	});

	it("a pending pre-release approval: prompt from the approval_request item", () => {
		const projection = finalProjection();
		const request = projection.runtimeRequests.find(
			(r) => r.kind === "command",
		);
		const q = pendingQuestion(withPending(projection, request?.id as string), {
			id: request?.id as string,
			kind: "command",
		});
		expect(q).toEqual({
			request_id: request?.id as string,
			kind: "approval",
			request_kind: "command",
			prompt: "fake codex wants to list files",
			answerable: true,
			reason: null,
			dismissable: false,
			questions: [],
			// The pre-release lists no options: accept and decline, as T3 takes them.
			decisions: [
				{ decision: "accept", label: "Accept", warning: null },
				{ decision: "decline", label: "Decline", warning: null },
			],
			app_name: null,
			decision_wire: { accept: "accept", decline: "decline" },
		});
	});

	it("approval options: T3's decisions in snake_case with labels and warnings; app name", () => {
		const projection = finalProjection();
		const request = projection.runtimeRequests.find(
			(r) => r.kind === "command",
		);
		const id = request?.id as string;
		const withOptions = {
			...withPending(projection, id),
			turnItems: projection.turnItems.map((i) =>
				i.requestId === id
					? {
							...i,
							appName: "Linear",
							options: [
								{
									decision: "accept",
									label: "Allow once",
									warning: "This server may be reading untrusted text.",
								},
								{ decision: "acceptForSession", label: "Allow this session" },
								{ decision: "cancel", label: "Cancel" },
							],
						}
					: i,
			),
		};
		const q = pendingQuestion(withOptions, { id, kind: "command" });
		expect([q?.decisions, q?.app_name, q?.decision_wire]).toEqual([
			[
				{
					decision: "accept",
					label: "Allow once",
					warning: "This server may be reading untrusted text.",
				},
				{
					decision: "accept_for_session",
					label: "Allow this session",
					warning: null,
				},
				{ decision: "cancel", label: "Cancel", warning: null },
			],
			"Linear",
			{
				accept: "accept",
				accept_for_session: "acceptForSession",
				cancel: "cancel",
			},
		]);
	});

	it("auth_refresh, dynamic_tool_call and not_resumable requests are questions nobody answers here", () => {
		const projection = finalProjection();
		const request = projection.runtimeRequests.find(
			(r) => r.kind === "command",
		);
		const id = request?.id as string;
		const as = (patch: Record<string, unknown>) => ({
			...projection,
			runtimeRequests: projection.runtimeRequests.map((r) =>
				r.id === id ? { ...r, ...patch, status: "pending" } : r,
			),
		});
		const auth = pendingQuestion(as({ kind: "auth_refresh" }), undefined, {
			machine: "vm",
		});
		expect([auth?.kind, auth?.answerable, auth?.decisions]).toEqual([
			"auth_refresh",
			false,
			null,
		]);
		expect(auth?.reason).toContain('must be signed in again on machine "vm"');
		const tool = pendingQuestion(as({ kind: "dynamic_tool_call" }));
		expect([tool?.kind, tool?.answerable]).toEqual(["dynamic_tool", false]);
		expect(tool?.reason).toContain("a T3 Code client answers");
		const stale = pendingQuestion(
			as({
				responseCapability: {
					type: "not_resumable",
					reason: "the provider session ended",
				},
			}),
		);
		expect([stale?.kind, stale?.answerable]).toEqual(["approval", false]);
		expect(stale?.reason).toContain("(the provider session ended)");
		expect(stale?.reason).toContain("t3_interrupt");
	});

	it("runDetails lists messages, tools and files of a run", () => {
		const projection = finalProjection();
		const launchRun = projection.runs.find((r) => r.ordinal === 1);
		const details = runDetails(projection, launchRun?.id ?? "");
		expect(details.messages).toEqual([
			{ role: "user", text: "say hi", attachments: [] },
			{ role: "assistant", text: "Hello from fake codex.", attachments: [] },
		]);
		expect(details.tools).toEqual([
			{
				item_id: expect.any(String),
				output_omitted: false,
				failed: false,
				kind: "command_execution",
				title: "Workspace ready",
				status: "completed",
				exit_code: 0,
			},
		]);
		expect(details.files).toEqual([]);
	});

	it("ws-getThreadProjection.result.json decodes and derives", () => {
		const p = decodeThreadProjection(
			(
				readCaptureJson("ws-getThreadProjection.result.json") as {
					value: unknown;
				}
			).value,
		);
		const run = latestRun(p);
		expect(run).not.toBeNull();
		expect(() => runDetails(p, run?.id ?? "")).not.toThrow();
	});
});

describe("derive from released-shape projections", () => {
	const projection = decodeThreadProjection({
		thread: {
			id: "t1",
			projectId: "p1",
			title: "x",
			lastError: "provider crashed",
		},
		runs: [
			{ id: "r1", ordinal: 1, userMessageId: "m1", status: "completed" },
			{ id: "r2", ordinal: 2, userMessageId: "m2", status: "running" },
		],
		messages: [
			{ id: "m1", runId: "r1", role: "user", text: "hi", streaming: false },
			{
				id: "a1",
				runId: "r1",
				role: "assistant",
				text: "first answer",
				streaming: false,
			},
			{
				id: "a2",
				runId: "r2",
				role: "assistant",
				text: "partial",
				streaming: true,
			},
		],
		turnItems: [
			{
				id: "i1",
				runId: "r1",
				ordinal: 2,
				type: "assistant_message",
				text: "draft",
				streaming: true,
			},
			{
				id: "i2",
				runId: "r1",
				ordinal: 3,
				type: "assistant_message",
				text: "final answer",
				streaming: false,
			},
			{
				id: "i0",
				runId: "r1",
				ordinal: 1,
				type: "assistant_message",
				text: "early",
				streaming: false,
			},
			{
				id: "f1",
				runId: "r1",
				ordinal: 4,
				type: "file_change",
				fileName: "src/a.ts",
				status: "completed",
			},
			{
				id: "c1",
				runId: "r1",
				ordinal: 5,
				type: "checkpoint",
				files: [
					{ path: "src/b.ts", kind: "added", additions: 3, deletions: 0 },
				],
			},
			{
				id: "w1",
				runId: "r1",
				ordinal: 6,
				type: "web_search",
				patterns: ["bun websocket"],
				status: "completed",
			},
			{
				id: "q1",
				runId: "r2",
				ordinal: 1,
				type: "user_input_request",
				requestId: "req-q",
				questions: [
					{
						id: "envs",
						header: "Envs",
						question: "Which environments?",
						options: [
							{ label: "Staging", description: "", value: "stage" },
							{ label: "Production", description: "" },
						],
						multiSelect: true,
						allowCustomAnswer: false,
						required: false,
					},
				],
			},
			{
				id: "ap",
				runId: "r2",
				ordinal: 2,
				type: "approval_request",
				requestId: "req-a",
				requestKind: "file-change",
				prompt: "write src/c.ts",
				options: [{ decision: "accept", label: "Allow" }],
			},
		],
		runtimeRequests: [
			{
				id: "req-q",
				kind: "user_input",
				status: "pending",
				responseCapability: { type: "message" },
			},
			{ id: "req-a", kind: "file-change", status: "pending" },
			{ id: "req-auth", kind: "auth_refresh", status: "pending" },
		],
		providerSessions: [],
	});

	it("final message: last non-streaming item by ordinal; else the message row; never concatenated", () => {
		expect(finalAssistantMessage(projection, "r1")).toBe("final answer");
		expect(finalAssistantMessage(projection, "r2")).toBe("partial");
		expect(finalAssistantMessage(projection, "nope")).toBeNull();
		expect(findRunByMessageId(projection, "m2")?.id).toBe("r2");
		expect(findRunByMessageId(projection, "m9")).toBeNull();
		expect(latestRun(projection)?.id).toBe("r2");
	});

	it("question with values, multi-select, no custom answers, optional", () => {
		const q = pendingQuestion(projection, { id: "req-q", kind: "user_input" });
		expect(q?.questions[0]).toEqual({
			id: "envs",
			header: "Envs",
			text: "Which environments?",
			options: ["Staging", "Production"],
			multi_select: true,
			allow_custom: false,
			required: false,
		});
		expect(questionOptionValue(projection, "req-q", "envs", "Staging")).toBe(
			"stage",
		);
		expect(questionOptionValue(projection, "req-q", "envs", "Production")).toBe(
			"Production",
		);
		expect(questionOptionValue(projection, "req-q", "envs", "free text")).toBe(
			"free text",
		);
	});

	it("approvals of any non-question kind; auth_refresh is its own, unanswerable kind", () => {
		expect(
			pendingQuestion(projection, { id: "req-a", kind: "file-change" }),
		).toMatchObject({
			kind: "approval",
			prompt: "write src/c.ts",
		});
		expect(
			pendingQuestion(projection, { id: "req-auth", kind: "auth_refresh" }),
		).toMatchObject({ kind: "auth_refresh", answerable: false });
		// Without the shell: the newest pending request of the projection (auth_refresh here).
		expect(pendingQuestion(projection)?.kind).toBe("auth_refresh");
	});

	it("runError falls back to the shell lastError for the latest run, once it failed", () => {
		const failed = (status: string, latestRunId: string) => ({
			...projection,
			runs: projection.runs.map((r) => ({ ...r, status })),
			thread: { ...projection.thread, latestRunId },
		});
		expect(runError(failed("failed", "r1"), "r1")).toBe("provider crashed");
		// Another run's failure, or a run that did not fail: not this run's error.
		expect(runError(failed("failed", "r2"), "r1")).toBeNull();
		expect(runError(failed("completed", "r1"), "r1")).toBeNull();
		expect(runError(projection, "r1")).toBeNull();
	});

	it("runDetails collects tools and files", () => {
		const d = runDetails(projection, "r1");
		expect(d.messages).toEqual([
			{ role: "user", text: "hi" },
			{ role: "assistant", text: "first answer" },
		]);
		expect(d.tools).toEqual([
			{
				item_id: expect.any(String),
				output_omitted: false,
				failed: false,
				kind: "file_change",
				title: "src/a.ts",
				status: "completed",
				exit_code: null,
			},
			{
				item_id: expect.any(String),
				output_omitted: false,
				failed: false,
				kind: "web_search",
				title: "bun websocket",
				status: "completed",
				exit_code: null,
			},
		]);
		expect(d.files).toEqual([
			{ path: "src/a.ts", change: "modified" },
			{ path: "src/b.ts", change: "added" },
		]);
	});

	it("capText marks truncation visibly and keeps the limit", () => {
		expect(capText("short", 10)).toBe("short");
		const cut = capText("x".repeat(100), 40);
		expect(cut.endsWith(TRUNCATION_MARKER)).toBe(true);
		expect(cut.length).toBe(40);
	});
});

/** A copy of the projection in which one runtime request is still pending. */
function withPending(
	projection: ThreadProjection,
	requestId: string,
): ThreadProjection {
	return {
		...projection,
		runtimeRequests: projection.runtimeRequests.map((r) =>
			r.id === requestId ? { ...r, status: "pending" } : r,
		),
	};
}

describe("runError after a retried workspace preparation", () => {
	const PREP = "Workspace preparation failed: fatal: invalid reference: next";
	/** Run r1: attempt 1 failed preparing (no provider turn), attempt 2 reached its provider. */
	function retried(
		status: string,
		extra: Record<string, unknown>[] = [],
		thread: Record<string, unknown> = {},
	) {
		return decodeThreadProjection({
			thread: {
				id: "t1",
				projectId: "p1",
				title: "x",
				latestRunId: "r1",
				...thread,
			},
			runs: [
				{
					id: "r1",
					ordinal: 1,
					userMessageId: "m1",
					status,
					activeAttemptId: "a2",
				},
			],
			attempts: [
				{ id: "a1", runId: "r1", attemptOrdinal: 1, status: "failed" },
				{
					id: "a2",
					runId: "r1",
					attemptOrdinal: 2,
					reason: "preparation_retry",
				},
			],
			providerTurns: [{ id: "pt2", runAttemptId: "a2" }],
			turnItems: [
				{
					id: "prep-error",
					runId: "r1",
					ordinal: 3,
					providerTurnId: null,
					type: "error",
					failure: {
						class: "unknown",
						message: PREP,
						code: "workspace_preparation_failed",
					},
				},
				{
					id: "said",
					runId: "r1",
					ordinal: 5,
					providerTurnId: "pt2",
					type: "assistant_message",
					text: "working",
					streaming: false,
				},
				...extra,
			],
		});
	}

	it("no error while the retried run is busy, nor once it completed or was interrupted", () => {
		for (const status of [
			"preparing",
			"running",
			"waiting",
			"completed",
			"interrupted",
		])
			expect([status, runError(retried(status), "r1")]).toEqual([status, null]);
		// Not even when the shell still carries the old text.
		expect(
			runError(retried("completed", [], { lastError: PREP }), "r1"),
		).toBeNull();
	});

	it("interrupted while preparing again (no provider turn yet): not the earlier attempt's error", () => {
		const p = retried("interrupted");
		p.providerTurns = [];
		expect(runError(p, "r1")).toBeNull();
		// A first attempt has no earlier one: its error items are its own.
		p.runs = p.runs.map((r) => ({ ...r, activeAttemptId: "a1" }));
		expect(runError(p, "r1")).toBe(PREP);
	});

	it("failed again: the new failure's text and class", () => {
		const p = retried("failed", [
			{
				id: "turn-failure",
				runId: "r1",
				ordinal: 7,
				providerTurnId: "pt2",
				type: "error",
				failure: { class: "provider_error", message: "sim agent failure" },
			},
		]);
		expect(runError(p, "r1")).toBe("sim agent failure");
		expect(runFailure(p, "r1").error_class).toBe("provider_error");
	});

	it("failed again without an error item of its own: the shell's text and class, not the preparation's", () => {
		const p = retried("failed", [], {
			lastError: "provider crashed",
			lastErrorClass: "transport_error",
		});
		expect(runError(p, "r1")).toBe("provider crashed");
		expect(runFailure(p, "r1").error_class).toBe("transport_error");
	});

	it("failed preparing again (no provider turn): the newest error item", () => {
		const again = decodeThreadProjection({
			thread: { id: "t1", projectId: "p1", title: "x", latestRunId: "r1" },
			runs: [
				{
					id: "r1",
					ordinal: 1,
					userMessageId: "m1",
					status: "failed",
					activeAttemptId: "a2",
				},
			],
			attempts: [
				{ id: "a1", runId: "r1", attemptOrdinal: 1 },
				{ id: "a2", runId: "r1", attemptOrdinal: 2 },
			],
			turnItems: [
				{
					id: "e1",
					runId: "r1",
					ordinal: 3,
					type: "error",
					failure: { message: PREP, code: "workspace_preparation_failed" },
				},
				{
					id: "e2",
					runId: "r1",
					ordinal: 8,
					type: "error",
					failure: {
						message: "Workspace preparation failed: branch taken",
						code: "workspace_preparation_failed",
					},
				},
			],
		});
		expect(runError(again, "r1")).toBe(
			"Workspace preparation failed: branch taken",
		);
		expect(runFailure(again, "r1").error_class).toBe("workspace_preparation");
	});

	it("a pre-release projection (no attempts, no provider turns): the run's error items as before", () => {
		const old = (status: string) =>
			decodeThreadProjection({
				thread: { id: "t1", projectId: "p1", title: "x" },
				runs: [{ id: "r1", ordinal: 1, userMessageId: "m1", status }],
				turnItems: [
					{
						id: "e1",
						runId: "r1",
						ordinal: 2,
						type: "error",
						failure: { message: "boom" },
					},
				],
			});
		expect(runError(old("failed"), "r1")).toBe("boom");
		expect(runError(old("cancelled"), "r1")).toBe("boom");
		expect(runError(old("running"), "r1")).toBeNull();
	});
});
