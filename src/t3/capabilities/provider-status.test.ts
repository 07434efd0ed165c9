import { describe, expect, it } from "bun:test";
import { decodeProviderStatuses } from "./provider-status.ts";

const claude = (usageLimits?: unknown) => ({
	instanceId: "claudeAgent",
	driver: "claudeAgent",
	enabled: true,
	installed: true,
	status: "ready",
	auth: { status: "authenticated" },
	...(usageLimits === undefined ? {} : { usageLimits }),
});

describe("provider statuses and usage limits (USAGE-AND-QUEUES.md §1.1)", () => {
	it("decodes windows leniently: unknown keys and kinds tolerated, a missing percent unknown", () => {
		const [p] = decodeProviderStatuses([
			claude({
				checkedAt: "2026-12-05T10:00:00.000Z",
				fullReadAt: "2026-12-05T10:00:00.000Z",
				windows: [
					{
						id: "five_hour",
						kind: "session",
						label: "Session",
						usedPercent: 83,
						resetsAt: "2026-12-05T12:00:00.000Z",
						windowDurationMins: 300,
					},
					{ id: "seven_day", kind: "fortnightly", label: "Weekly" },
					"not a window",
				],
			}),
		]);
		expect(p?.ready).toBe(true);
		expect(p?.usage).toEqual({
			checkedAt: "2026-12-05T10:00:00.000Z",
			windows: [
				{
					id: "five_hour",
					kind: "session",
					label: "Session",
					usedPercent: 83,
					resetsAt: "2026-12-05T12:00:00.000Z",
				},
				{
					id: "seven_day",
					kind: "other",
					label: "Weekly",
					usedPercent: null,
					resetsAt: null,
				},
			],
			unavailable: null,
		});
	});

	it("no usageLimits is no usage reported; unsupported clears, probeFailed keeps the last bars", () => {
		expect(decodeProviderStatuses([claude()])[0]?.usage).toBeNull();
		const before = decodeProviderStatuses([
			claude({
				checkedAt: "2026-12-05T10:00:00.000Z",
				windows: [{ id: "w", kind: "weekly", label: "W", usedPercent: 10 }],
			}),
		]);
		const failed = decodeProviderStatuses(
			[
				claude({
					checkedAt: "2026-12-05T11:00:00.000Z",
					windows: [],
					unavailable: { reason: "probeFailed", message: "timeout" },
				}),
			],
			before,
		);
		expect(failed[0]?.usage?.windows.map((w) => w.usedPercent)).toEqual([10]);
		expect(failed[0]?.usage?.unavailable).toEqual({
			reason: "probeFailed",
			message: "timeout",
		});
		const unsupported = decodeProviderStatuses(
			[claude({ windows: [], unavailable: { reason: "unsupported" } })],
			before,
		);
		expect(unsupported[0]?.usage?.windows).toEqual([]);
	});

	it("labels are T3's text: capped", () => {
		const [p] = decodeProviderStatuses([
			claude({
				windows: [{ kind: "session", label: "x".repeat(500), usedPercent: 5 }],
			}),
		]);
		expect(p?.usage?.windows[0]?.label.length).toBeLessThanOrEqual(80);
	});
});
