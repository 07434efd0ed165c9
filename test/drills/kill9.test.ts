/** Short CI version of drills/kill9.ts (full: `bun run drills`). */
import { expect, test } from "bun:test";
import { kill9Drill } from "../../drills/kill9.ts";
import { formatTable, passed } from "../../drills/lib/tally.ts";

test("connector kill -9 at random points: restarts on the same state, nothing lost, duplicates keep their id", async () => {
	const report = await kill9Drill({ full: false });
	if (!passed(report)) console.log(formatTable([report]));
	if (report.skipped) {
		console.log(`kill9 drill skipped: ${report.skipped}`);
		return;
	}
	expect(report.expected).toBeGreaterThan(0);
	expect(report.lost).toBe(0);
	expect(report.extraIds).toBe(0);
	expect(report.wrong).toBe(0);
	expect(report.problems).toEqual([]);
}, 90_000);
