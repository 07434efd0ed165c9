/**
 * `bun run drills [name…] [--short]`: runs the fault drills (full size unless --short), prints
 * one table row per drill (runs, events expected, delivered, duplicates, lost) and exits
 * non-zero when any drill lost an event or minted a second id for a run.
 */
import { blackholeDrill } from "./blackhole.ts";
import { flappingDrill } from "./flapping.ts";
import { fullDiskDrill } from "./full-disk.ts";
import { kill9Drill } from "./kill9.ts";
import type { DrillSize } from "./lib/stack-drill.ts";
import {
	crashedReport,
	type DrillReport,
	formatTable,
	passed,
} from "./lib/tally.ts";
import { poolCrashDrill } from "./pool-crash.ts";
import { restartDrill } from "./restart.ts";
import { tokenDrill } from "./token.ts";
import { webhookDownDrill } from "./webhook-down.ts";

const DRILLS: Record<string, (size: DrillSize) => Promise<DrillReport>> = {
	"t3-restart": restartDrill,
	blackhole: blackholeDrill,
	"kill-9": kill9Drill,
	"webhook-down": webhookDownDrill,
	"token-revoked": tokenDrill,
	flapping: flappingDrill,
	"full-disk": fullDiskDrill,
	"pool-crash": poolCrashDrill,
};

const args = process.argv.slice(2);
const full = !args.includes("--short");
const names = args.filter((a) => !a.startsWith("--"));
const unknown = names.filter((n) => !(n in DRILLS));
if (unknown.length) {
	console.error(
		`unknown drill ${unknown.join(", ")}; drills: ${Object.keys(DRILLS).join(", ")}`,
	);
	process.exit(2);
}
const selected = names.length ? names : Object.keys(DRILLS);
const reports: DrillReport[] = [];
const started = performance.now();
for (const name of selected) {
	const run = DRILLS[name] as (size: DrillSize) => Promise<DrillReport>;
	process.stderr.write(`drill ${name}${full ? "" : " (short)"}…\n`);
	try {
		reports.push(await run({ full }));
	} catch (error) {
		reports.push(crashedReport(name, error));
	}
}
console.log(formatTable(reports));
console.log(
	`\n${reports.length} drills in ${((performance.now() - started) / 1000).toFixed(1)} s (${full ? "full" : "short"})`,
);
process.exit(reports.every(passed) ? 0 : 1);
