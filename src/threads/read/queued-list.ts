/**
 * `t3_thread` `queued`: the thread's follow-ups that have not started, in the order they will
 * run, with their message (masked and capped like every T3 text) and whether the queue is held.
 */
import { capText, runDetails } from "../../t3/derive/derive.ts";
import type { ThreadProjection } from "../../t3/model.ts";
import { queuedRuns } from "../control/interrupt.ts";

export interface QueuedListing {
	run_id: string;
	text: string;
	held: boolean;
}

export function queuedListing(
	projection: ThreadProjection,
	cap: number,
): QueuedListing[] {
	return queuedRuns(projection).map(({ run_id, held }) => {
		const run = projection.runs.find((r) => r.id === run_id);
		const message =
			projection.messages.find(
				(m) => run?.userMessageId != null && m.id === run.userMessageId,
			)?.text ??
			runDetails(projection, run_id).messages.find((m) => m.role === "user")
				?.text ??
			"";
		return { run_id, text: capText(message, cap), held };
	});
}
