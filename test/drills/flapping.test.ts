/** Short CI version of drills/flapping.ts (full: `bun run drills`). */
import { expect, test } from "bun:test";
import { flappingDrill } from "../../drills/flapping.ts";
import { formatTable, passed } from "../../drills/lib/tally.ts";

test("5 machines flapping while runs complete: every terminal run notifies once", async () => {
	const report = await flappingDrill({ full: false });
	if (!passed(report)) console.log(formatTable([report]));
	if (report.skipped) {
		console.log(`flapping drill skipped: ${report.skipped}`);
		return;
	}
	expect(report.expected).toBeGreaterThan(0);
	expect(report.lost).toBe(0);
	expect(report.extraIds).toBe(0);
	expect(report.wrong).toBe(0);
	expect(report.problems).toEqual([]);
}, 90_000);
