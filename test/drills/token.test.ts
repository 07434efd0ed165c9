/** Short CI version of the token revoked/restored drill (drills/token.ts). */
import { tokenDrill } from "../../drills/token.ts";
import { drillTest } from "./drill-test.ts";

drillTest(
	"token revoked then restored: unauthorized, back online, runs meanwhile still notify",
	tokenDrill,
);
