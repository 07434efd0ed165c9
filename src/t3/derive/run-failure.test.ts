import { describe, expect, it } from "bun:test";
import { decodeThreadProjection } from "../decode/projection.ts";
import { decodeThreadShell } from "../decode/shell.ts";
import { runFailure, shellFailure } from "./run-failure.ts";

const RESET = "2026-12-01T14:00:00.000Z";

function projection(extra: {
	thread?: Record<string, unknown>;
	items?: Record<string, unknown>[];
	runs?: Record<string, unknown>[];
	messages?: Record<string, unknown>[];
}) {
	return decodeThreadProjection({
		thread: { id: "t", latestRunId: "r1", status: "failed", ...extra.thread },
		runs: extra.runs ?? [
			{ id: "r1", ordinal: 1, status: "failed", userMessageId: "m1" },
		],
		messages: extra.messages ?? [],
		turnItems: extra.items ?? [],
		runtimeRequests: [],
		providerSessions: [],
	});
}

const errorItem = (failure: Record<string, unknown>) => ({
	id: "e1",
	type: "error",
	runId: "r1",
	failure,
});

describe("runFailure", () => {
	it("a usage limit: class, reset time from the item, auto-resume from T3's recovery plan", () => {
		const p = projection({
			thread: {
				limitRecovery: { runId: "r1", resetAt: RESET, autoResume: true },
			},
			items: [
				errorItem({ class: "usage_limit", message: "x", resetAt: RESET }),
			],
		});
		expect(runFailure(p, "r1")).toEqual({
			error_class: "usage_limit",
			reset_at: RESET,
			auto_resume: true,
		});
	});

	it("recovery for another run does not resume this one; the shell's reset fills in", () => {
		const p = projection({
			thread: { limitRecovery: { runId: "r0", autoResume: true } },
			items: [errorItem({ class: "usage_limit", message: "x" })],
		});
		const shell = decodeThreadShell({
			id: "t",
			latestRunId: "r1",
			status: "failed",
			usageLimitResetAt: RESET,
		});
		expect(runFailure(p, "r1", shell)).toEqual({
			error_class: "usage_limit",
			reset_at: RESET,
			auto_resume: false,
		});
	});

	it("a failed workspace preparation by its code; an unknown class is unknown; none at all is unknown", () => {
		expect(
			runFailure(
				projection({
					items: [
						errorItem({
							class: "unknown",
							code: "workspace_preparation_failed",
							message: "x",
						}),
					],
				}),
				"r1",
			).error_class,
		).toBe("workspace_preparation");
		expect(
			runFailure(
				projection({ items: [errorItem({ class: "quota_gremlin" })] }),
				"r1",
			).error_class,
		).toBe("unknown");
		expect(runFailure(projection({}), "r1")).toEqual({
			error_class: "unknown",
			reset_at: null,
			auto_resume: false,
		});
	});

	it("without an error item the shell's class counts for its latest run only", () => {
		const p = projection({
			runs: [
				{ id: "r1", ordinal: 1, status: "failed" },
				{ id: "r2", ordinal: 2, status: "failed" },
			],
			thread: { latestRunId: "r2", lastErrorClass: "transport_error" },
		});
		expect(runFailure(p, "r2").error_class).toBe("transport_error");
		expect(runFailure(p, "r1").error_class).toBe("unknown");
	});
});

describe("shellFailure", () => {
	it("only while the latest run is failed", () => {
		const failed = decodeThreadShell({
			id: "t",
			status: "failed",
			latestRunId: "r1",
			lastErrorClass: "usage_limit",
			usageLimitResetAt: RESET,
			limitRecovery: { runId: "r1", resetAt: RESET, autoResume: true },
		});
		expect(shellFailure(failed)).toEqual({
			error_class: "usage_limit",
			reset_at: RESET,
			auto_resume: true,
		});
		expect(shellFailure({ ...failed, status: "completed" })).toEqual({
			error_class: null,
			reset_at: null,
			auto_resume: false,
		});
		// A pre-release shell says nothing about why.
		expect(
			shellFailure(decodeThreadShell({ id: "t", status: "failed" })),
		).toEqual({ error_class: "unknown", reset_at: null, auto_resume: false });
	});
});
