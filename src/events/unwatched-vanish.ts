/**
 * Threads tracked but not watched that vanished from their machine (it came back with empty
 * state, or they were deleted elsewhere): no event is due for them, but `t3_watch` and
 * `t3_threads` must show them as missing, not with their last status. Checked at each catch-up
 * (`synchronized`): a record the live shell lacks is either archived (one read of the archived
 * snapshot tells) or gone, which T3 confirms per thread (404 or deleted) before it is marked.
 */
import type { FleetMachine } from "../fleet/fleet.ts";
import type { DispatchStore } from "../store/dispatches.ts";
import type { ThreadStore } from "../store/threads.ts";
import { isNotFound } from "../threads/wait/vanish.ts";

export async function markUnwatchedVanished(
	deps: {
		threads: ThreadStore;
		dispatches: DispatchStore;
		now: () => number;
	},
	entry: FleetMachine,
): Promise<number> {
	const machine = entry.machine;
	const candidates = deps.threads.unwatchedOn(entry.config.name).filter(
		(r) =>
			machine.thread(r.thread_id) === undefined &&
			// A dispatch T3 has not confirmed yet may simply not have reached it.
			deps.dispatches.latestForThread(r.thread_id)?.run_id !== null,
	);
	if (candidates.length === 0) return 0;
	const archived = new Set((await machine.archivedThreads()).map((t) => t.id));
	let marked = 0;
	for (const record of candidates) {
		if (archived.has(record.thread_id)) continue;
		try {
			const { projection } = await machine.getThread(record.thread_id);
			if (!projection.thread.deletedAt) continue;
		} catch (error) {
			if (!isNotFound(error)) throw error;
		}
		// Watched again meanwhile: the tracker reports it as a watched thread.
		if (deps.threads.get(record.thread_id)?.watched !== 0) continue;
		deps.threads.markMissing(record.thread_id, deps.now());
		marked++;
	}
	return marked;
}
