/**
 * Short CI version of drills/full-disk.ts (full: `bun run drills`): no lost event, no
 * corruption, keeps serving; the dispatch error says why, /healthz shows the storage error,
 * and events of runs that finished meanwhile arrive without waiting for a reconnect.
 */
import { beforeAll, expect, test } from "bun:test";
import { fullDiskDrill } from "../../drills/full-disk.ts";
import {
	type DrillReport,
	formatTable,
	passed,
} from "../../drills/lib/tally.ts";
import { expectNothingLost } from "./drill-test.ts";

const CAN_MOUNT = process.platform === "linux" && process.getuid?.() === 0;
let report: DrillReport;

beforeAll(async () => {
	report = await fullDiskDrill({ full: false });
	if (!passed(report)) console.log(formatTable([report]));
}, 90_000);

test("sqlite on a full disk: no event lost, no corruption, the server keeps serving", () => {
	if (report.skipped) {
		console.log(`full-disk drill skipped: ${report.skipped}`);
		return;
	}
	expectNothingLost(report);
	expect(report.notes).toContain("PRAGMA integrity_check: ok");
	expect(
		report.problems.filter((p) =>
			/stopped serving|integrity|still fails/.test(p),
		),
	).toEqual([]);
});

test.skipIf(!CAN_MOUNT)(
	"full disk: the dispatch error says why, /healthz shows it, events arrive without a reconnect",
	() => {
		expect(report.skipped).toBeFalsy();
		expect(report.problems).toEqual([]);
	},
);
