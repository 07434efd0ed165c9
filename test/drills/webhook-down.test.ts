/** Short CI version of the webhook-down drill (drills/webhook-down.ts), on a manual clock. */
import { webhookDownDrill } from "../../drills/webhook-down.ts";
import { drillTest } from "./drill-test.ts";

drillTest(
	"webhook down for 10 simulated minutes: every event arrives after, same id on retries",
	webhookDownDrill,
);
