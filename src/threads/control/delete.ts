/**
 * `t3_delete`: `thread.delete` (PROTOCOL.md §6.9). Kept apart from `t3_manage` (manage.ts), whose
 * refusal wording and shell catch-up it shares.
 */
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadDeps } from "../deps.ts";
import { once } from "../dispatch/idempotency.ts";
import { ThreadError } from "../errors.ts";
import {
	heldOf,
	type LocatedThread,
	locateThread,
	placeOf,
} from "../locate.ts";
import { beginOwnDelete } from "../wait/vanish.ts";
import { withdrawHeld } from "./held-control.ts";
import { shellCaughtUp, t3Reason } from "./manage.ts";

/**
 * `thread.delete`. The thread stops being watched before the command goes out, so the tracker
 * never reports it as vanished, and its record is dropped once T3 took the delete.
 */
export function deleteThread(
	deps: ThreadDeps,
	threadId: string,
	key?: string,
): Promise<{ thread_id: string; deleted: true }> {
	return once(
		deps,
		{ tool: "t3_delete", key, args: { thread_id: threadId }, threadId },
		async () => {
			// A held dispatch is withdrawn and forgotten; one that just started is deleted.
			const held = heldOf(deps, threadId);
			if (held) {
				const w = await withdrawHeld(deps, held);
				if (w.done !== "starting") {
					deps.holding?.forget(threadId);
					return { threadId, result: { thread_id: threadId, deleted: true } };
				}
			}
			const located = await locateThread(deps, threadId);
			return {
				threadId,
				result: await remove(deps, located),
				place: placeOf(located),
			};
		},
	);
}

async function remove(
	deps: ThreadDeps,
	located: LocatedThread,
): Promise<{ thread_id: string; deleted: true }> {
	const { threadId } = located;
	// Announced first, so neither the tracker nor an open wait calls it vanished (vanish.ts).
	const own = beginOwnDelete(deps, threadId);
	let sequence: number;
	try {
		({ sequence } = await located.entry.machine.dispatch({
			type: "thread.delete",
			commandId: deps.newId(),
			threadId,
		}));
	} catch (error) {
		own.undo();
		if (error instanceof T3Error && error.code === "REJECTED")
			throw new ThreadError(
				`T3 machine "${located.entry.config.name}" refused to delete thread "${threadId}": ${t3Reason(error)}`,
			);
		throw error;
	}
	own.confirm();
	await shellCaughtUp(located.entry.machine, sequence);
	return { thread_id: threadId, deleted: true };
}
