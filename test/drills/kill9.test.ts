/** Short CI version of drills/kill9.ts (full: `bun run drills`). */
import { kill9Drill } from "../../drills/kill9.ts";
import { drillTest } from "./drill-test.ts";

drillTest(
	"connector kill -9 at random points: restarts on the same state, nothing lost, duplicates keep their id",
	kill9Drill,
	90_000,
);
