/** Short CI version of the black-holed-socket drill (drills/blackhole.ts). */
import { expect, test } from "bun:test";
import { blackholeDrill } from "../../drills/blackhole.ts";
import { formatTable } from "../../drills/lib/tally.ts";

test("silent sockets: the heartbeat detects them, reconnects, nothing lost", async () => {
	const report = await blackholeDrill({ full: false });
	if (report.lost || report.extraIds || report.wrong)
		console.log(formatTable([report]));
	expect(report.expected).toBeGreaterThan(0);
	expect(report.lost).toBe(0);
	expect(report.extraIds).toBe(0);
	expect(report.wrong).toBe(0);
	expect(report.problems).toEqual([]);
}, 60_000);
