/**
 * One short drill (`full: false`) as a bun test: prints its table when it did not pass and
 * asserts the usual invariants: runs were expected, none lost, no run with a second event id,
 * no wrong delivery, no problem. A drill that reports itself skipped logs why and passes.
 */
import { expect, test } from "bun:test";
import type { DrillSize } from "../../drills/lib/stack-drill.ts";
import {
	type DrillReport,
	formatTable,
	passed,
} from "../../drills/lib/tally.ts";

/** Every expected event arrived, once per run id, and nothing else did. */
export function expectNothingLost(report: DrillReport): void {
	expect(report.expected).toBeGreaterThan(0);
	expect(report.lost).toBe(0);
	expect(report.extraIds).toBe(0);
	expect(report.wrong).toBe(0);
}

export function drillTest(
	name: string,
	drill: (size: DrillSize) => Promise<DrillReport>,
	timeoutMs = 60_000,
): void {
	test(
		name,
		async () => {
			const report = await drill({ full: false });
			if (!passed(report)) console.log(formatTable([report]));
			if (report.skipped) {
				console.log(`${report.drill} drill skipped: ${report.skipped}`);
				return;
			}
			expectNothingLost(report);
			expect(report.problems).toEqual([]);
		},
		timeoutMs,
	);
}
