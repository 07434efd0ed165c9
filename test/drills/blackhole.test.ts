/** Short CI version of the black-holed-socket drill (drills/blackhole.ts). */
import { blackholeDrill } from "../../drills/blackhole.ts";
import { drillTest } from "./drill-test.ts";

drillTest(
	"silent sockets: the heartbeat detects them, reconnects, nothing lost",
	blackholeDrill,
);
