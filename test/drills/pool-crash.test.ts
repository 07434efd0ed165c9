/** Short CI version of drills/pool-crash.ts (full: `bun run drills pool-crash`). */
import { poolCrashDrill } from "../../drills/pool-crash.ts";
import { drillTest } from "./drill-test.ts";

drillTest(
	"held dispatches drain across SIGKILLs: each starts exactly once, none lost, no machine above its cap",
	poolCrashDrill,
	120_000,
);
