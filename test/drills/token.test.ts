/** Short CI version of the token revoked/restored drill (drills/token.ts). */
import { expect, test } from "bun:test";
import { formatTable } from "../../drills/lib/tally.ts";
import { tokenDrill } from "../../drills/token.ts";

test("token revoked then restored: unauthorized, back online, runs meanwhile still notify", async () => {
	const report = await tokenDrill({ full: false });
	if (report.lost || report.extraIds || report.wrong)
		console.log(formatTable([report]));
	expect(report.expected).toBeGreaterThan(0);
	expect(report.lost).toBe(0);
	expect(report.extraIds).toBe(0);
	expect(report.wrong).toBe(0);
	expect(report.problems).toEqual([]);
}, 60_000);
