/** `[approvals]` as the tests configure it (CONTRACT.md "Approval links"). */
import type { ApprovalsConfig } from "../../src/config/types.ts";

/**
 * Approval links deciding as the client "boss", announced on the people hook at `hookUrl`
 * (no bearer), an hour long, offering accept and decline.
 */
export function testApprovals(hookUrl: string): ApprovalsConfig {
	return {
		linkClient: "boss",
		hookUrl,
		hookTokenEnv: null,
		hookToken: undefined,
		linkTtlS: 3600,
		decisions: ["accept", "decline"],
	};
}
