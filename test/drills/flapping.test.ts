/** Short CI version of drills/flapping.ts (full: `bun run drills`). */
import { flappingDrill } from "../../drills/flapping.ts";
import { drillTest } from "./drill-test.ts";

drillTest(
	"5 machines flapping while runs complete: every terminal run notifies once",
	flappingDrill,
	90_000,
);
