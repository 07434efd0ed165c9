/** Short CI version of the T3-restart drill (drills/restart.ts; full: `bun run drills`). */
import { restartDrill } from "../../drills/restart.ts";
import { drillTest } from "./drill-test.ts";

drillTest(
	"T3 restart mid-run: every cancelled run arrives as interrupted, nothing lost",
	restartDrill,
);
