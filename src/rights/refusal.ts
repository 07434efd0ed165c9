/**
 * A call refused for a missing right. Its message starts with the error code (CONTRACT.md
 * "Clients and rights") and says which right is missing and the caller's own rights, never
 * another client's token or reach. Nothing the call asked for has reached T3 when it is thrown.
 */
import type { ClientConfig } from "../config/types.ts";
import { ThreadError } from "../threads/errors.ts";

export type RefusalCode =
	| "capability_denied"
	| "runtime_mode_escalation_denied"
	| "approval_denied"
	| "max_active_runs_reached"
	/** A pattern dispatch no candidate machine has room for now (CONTRACT.md "One pool"). */
	| "no_capacity"
	/** A pattern dispatch no reached machine could ever take: none has the project. */
	| "no_project"
	/** A `machine` pattern that matches no machine the client reaches. */
	| "no_machine"
	/** Holding past a client's or the server's `max_held` (CONTRACT.md "One pool"). */
	| "max_held_reached";

export class RightsError extends ThreadError {
	constructor(
		readonly code: RefusalCode,
		message: string,
	) {
		super(`${code}: ${message}`);
	}
}

/** "client "agent" (access approval-required)": who is refused, in its own terms. */
export const whoIs = (client: ClientConfig) =>
	`client "${client.name}" (access ${client.access}${client.approve ? ", approver" : ""})`;
