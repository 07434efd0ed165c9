import { describe, expect, it } from "bun:test";
import type { ThreadProjection } from "../../t3/model.ts";
import { planDelivery } from "./settings.ts";

function projection(
	status: string | null,
	turns?: Record<string, boolean>,
): ThreadProjection {
	return {
		thread: {
			id: "t",
			projectId: "p",
			title: "",
			modelSelection: { instanceId: "x", model: "m" },
			latestRunId: null,
			activeRunId: null,
			status: "idle",
			pendingRuntimeRequest: null,
			latestVisibleMessage: null,
		},
		runs: status
			? [
					{
						id: "r1",
						threadId: "t",
						ordinal: 1,
						userMessageId: "m1",
						status,
						requestedAt: null,
						startedAt: null,
						completedAt: null,
					},
				]
			: [],
		messages: [],
		turnItems: [],
		runtimeRequests: [],
		providerSessions: turns
			? [{ id: "s", providerInstanceId: "x", capabilities: { turns } }]
			: [],
	};
}

describe("planDelivery", () => {
	it("queue (and no mode) is queue_after_active behind a busy run, start_immediately when idle", () => {
		for (const mode of ["queue", undefined] as const) {
			expect(planDelivery(mode, projection("running"), false)).toEqual({
				dispatchMode: { type: "queue_after_active" },
			});
			expect(planDelivery(mode, projection("completed"), true)).toEqual({
				dispatchMode: { type: "start_immediately" },
			});
		}
	});

	it("with deliveryIntent the server resolves steer and restart", () => {
		expect(planDelivery("steer", projection("running"), true)).toEqual({
			dispatchMode: { type: "start_immediately" },
			deliveryIntent: "steer",
		});
		expect(planDelivery("restart", projection("starting"), true)).toEqual({
			dispatchMode: { type: "start_immediately" },
			deliveryIntent: "restart",
		});
	});

	it("without it: steer_active, restart_active for restart-only sessions, a queue otherwise", () => {
		const steer = (p: ThreadProjection) => planDelivery("steer", p, false);
		expect(steer(projection("running"))).toEqual({
			dispatchMode: { type: "steer_active", targetRunId: "r1" },
		});
		expect(
			steer(
				projection("running", {
					supportsActiveSteering: false,
					supportsSteeringByInterruptRestart: true,
				}),
			),
		).toEqual({ dispatchMode: { type: "restart_active", targetRunId: "r1" } });
		expect(
			steer(
				projection("running", {
					supportsActiveSteering: false,
					supportsSteeringByInterruptRestart: false,
				}),
			),
		).toEqual({ dispatchMode: { type: "queue_after_active" } });
		// Not running yet: T3 cannot steer it, so it waits its turn.
		expect(steer(projection("starting"))).toEqual({
			dispatchMode: { type: "queue_after_active" },
		});
		expect(planDelivery("restart", projection("starting"), false)).toEqual({
			dispatchMode: { type: "restart_active", targetRunId: "r1" },
		});
	});
});
