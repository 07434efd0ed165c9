/**
 * Sending a recorded dispatch's command to its machine: a definite refusal of a first attempt
 * forgets the dispatch (so a retry may correct it); a transport failure leaves it for a retry
 * with the same key.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { DispatchRecord } from "../../store/dispatches.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadProjection } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { type Claim, TOOL } from "./claim.ts";

/**
 * Sends the stored command (the machine re-sends it with the same commandId over transport
 * failures) and returns the thread's projection afterwards. A definite rejection of a first
 * attempt forgets the dispatch and runs `undo` (in the same transaction), so the client may
 * retry with corrected arguments and nothing half-written stays behind. A fork's key goes back
 * to its fork (`fork.from`): the fork exists, and a retry sends only the message.
 */
export async function send(
	deps: ThreadDeps,
	entry: FleetMachine,
	record: DispatchRecord,
	undo: (() => void) | undefined,
	fork?: Claim,
): Promise<ThreadProjection> {
	const payload = JSON.parse(record.payload) as Record<string, unknown> & {
		commandId: string;
		type: string;
	};
	try {
		if (record.kind === "launch") {
			const result = await entry.machine.launchThread(payload);
			return result.projection;
		}
		await entry.machine.dispatch(payload);
		return (await entry.machine.getThread(record.thread_id)).projection;
	} catch (error) {
		if (
			error instanceof T3Error &&
			(error.code === "REJECTED" || error.code === "DEFECT") &&
			!error.detail?.retried
		) {
			if (undo) {
				deps.db.transaction(() => {
					deps.dispatches.remove(record.command_id);
					if (fork?.from)
						deps.operations.moveRef(
							TOOL,
							fork.key,
							record.command_id,
							fork.from,
						);
					else deps.operations.removeRef(TOOL, record.command_id);
					undo();
				})();
			}
			throw new ThreadError(
				`Machine "${entry.config.name}" refused the dispatch: ${error.message}`,
			);
		}
		if (error instanceof T3Error) {
			throw new ThreadError(
				`Machine "${entry.config.name}" did not confirm the dispatch (${error.message}). It may still run: call t3_dispatch again with the same idempotency_key to re-send the same command safely, or check t3_thread "${record.thread_id}".`,
			);
		}
		throw error;
	}
}
