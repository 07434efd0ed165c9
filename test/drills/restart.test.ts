/** Short CI version of the T3-restart drill (drills/restart.ts; full: `bun run drills`). */
import { expect, test } from "bun:test";
import { formatTable } from "../../drills/lib/tally.ts";
import { restartDrill } from "../../drills/restart.ts";

test("T3 restart mid-run: every cancelled run arrives as interrupted, nothing lost", async () => {
	const report = await restartDrill({ full: false });
	if (report.lost || report.extraIds || report.wrong)
		console.log(formatTable([report]));
	expect(report.expected).toBeGreaterThan(0);
	expect(report.lost).toBe(0);
	expect(report.extraIds).toBe(0);
	expect(report.wrong).toBe(0);
	expect(report.problems).toEqual([]);
}, 60_000);
