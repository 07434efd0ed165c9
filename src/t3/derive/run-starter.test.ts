import { describe, expect, it } from "bun:test";
import { decodeThreadProjection } from "../decode/projection.ts";
import { startedByT3 } from "./run-starter.ts";

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

describe("startedByT3", () => {
	const run = (extra: Record<string, unknown> = {}) => ({
		id: "r1",
		ordinal: 1,
		status: "completed",
		userMessageId: "m1",
		...extra,
	});
	const withMessage = (message: Record<string, unknown>) =>
		projection({
			runs: [run()],
			messages: [
				{ id: "m1", role: "user", text: "x", runId: "r1", ...message },
			],
		});

	it("T3's continuations and wakes: server messages, notifications, continuation fields", () => {
		// Upstream's limit-resume worker (createdBy user, creationSource server).
		const limitResume = withMessage({
			createdBy: "user",
			creationSource: "server",
			usageLimitContinuationOfRunId: "r0",
		});
		expect(startedByT3(limitResume, limitResume.runs[0] as never)).toBe(true);
		const wake = withMessage({
			notification: { source: { kind: "command" }, summary: "done" },
		});
		expect(startedByT3(wake, wake.runs[0] as never)).toBe(true);
		const restart = projection({
			runs: [run({ restartContinuationOfRunId: "r0" })],
		});
		expect(startedByT3(restart, restart.runs[0] as never)).toBe(true);
	});

	it("a message someone typed (any client) is not T3's", () => {
		for (const creationSource of ["web", "mobile", "mcp"]) {
			const p = withMessage({ createdBy: "user", creationSource });
			expect(startedByT3(p, p.runs[0] as never)).toBe(false);
		}
		const unknown = projection({ runs: [run()] });
		expect(startedByT3(unknown, unknown.runs[0] as never)).toBe(false);
	});
});
