/** Short CI version of the webhook-down drill (drills/webhook-down.ts), on a manual clock. */
import { expect, test } from "bun:test";
import { formatTable } from "../../drills/lib/tally.ts";
import { webhookDownDrill } from "../../drills/webhook-down.ts";

test("webhook down for 10 simulated minutes: every event arrives after, same id on retries", async () => {
	const report = await webhookDownDrill({ full: false });
	if (report.lost || report.extraIds || report.wrong)
		console.log(formatTable([report]));
	expect(report.expected).toBeGreaterThan(0);
	expect(report.lost).toBe(0);
	expect(report.extraIds).toBe(0);
	expect(report.wrong).toBe(0);
	expect(report.problems).toEqual([]);
}, 60_000);
