import { describe, expect, test } from "bun:test";
import { decodeThreadProjection } from "../decode/projection.ts";
import { createFollowedProjection } from "./followed-projection.ts";
import {
	createKeptThreadViews,
	KEPT_BYTES,
	KEPT_BYTES_PER_VIEW,
} from "./kept-thread-views.ts";

/** A settled thread whose one tool call printed `outputChars` characters. */
function viewWithOutput(id: string, outputChars: number) {
	return createFollowedProjection(
		decodeThreadProjection({
			thread: { id, title: id },
			runs: [{ id: `${id}-r1`, ordinal: 1, status: "completed" }],
			turnItems: [
				{
					id: `${id}-i1`,
					runId: `${id}-r1`,
					kind: "command_execution",
					status: "completed",
					output: "x".repeat(outputChars),
				},
			],
		}),
	);
}

describe("kept thread views", () => {
	test("are budgeted by the bytes they hold, not their rows: big outputs cannot pile up", () => {
		const kept = createKeptThreadViews();
		// Two rows each, so 40 of them were far under a budget of 8 000 rows: 20 MB kept.
		for (let i = 0; i < 40; i += 1) {
			const view = viewWithOutput(`t${i}`, 500_000);
			kept.keep(
				`m\u0000t${i}`,
				{ view, lastSeq: 1, complete: true },
				view.approxBytes(),
			);
		}
		const { views, size } = kept.stats();
		expect(size).toBeLessThanOrEqual(KEPT_BYTES);
		expect(views).toBe(Math.floor(KEPT_BYTES / (500_000 + 2_000)));
		// The newest are the ones kept.
		expect(kept.take("m\u0000t39")).toBeDefined();
		expect(kept.take("m\u0000t0")).toBeUndefined();
	});

	test("a fork's inherited conversation counts too", () => {
		const own = viewWithOutput("plain", 10).approxBytes();
		const fork = createFollowedProjection(
			decodeThreadProjection({
				thread: { id: "fork", title: "fork" },
				visibleTurnItems: [
					{
						id: "inherited-1",
						visibility: "inherited",
						text: "y".repeat(2 * KEPT_BYTES_PER_VIEW),
					},
				],
			}),
		);
		expect(fork.approxBytes()).toBeGreaterThan(2 * KEPT_BYTES_PER_VIEW);
		expect(own).toBeLessThan(2_000);
	});

	test("a view over the per-view budget that trimming cannot shrink is not kept", () => {
		const kept = createKeptThreadViews();
		const view = viewWithOutput("big", KEPT_BYTES_PER_VIEW + 1);
		kept.keep(
			"m\u0000big",
			{ view, lastSeq: 1, complete: true },
			view.approxBytes(),
		);
		expect(kept.take("m\u0000big")).toBeUndefined();
		expect(kept.stats()).toEqual({ views: 0, size: 0 });
	});
});
