/**
 * One evaluation of a watched thread: read its shell and, when the shell shows something to
 * record, a projection covering every run after the baseline; then, in one commit, the new
 * outbox rows, the observed state and the moved baseline. A vanished thread goes to
 * watched-vanish.ts.
 */
import type { GroupCommit } from "../store/group-commit.ts";
import { transitions } from "./event-building.ts";
import { coversAfter, watermark } from "./outcome-events.ts";
import { nothingToDo, seen } from "./shell-activity.ts";
import type { TrackerDeps } from "./tracker.ts";
import { forgetIfGone, reportVanished } from "./watched-vanish.ts";

/** Evaluates one thread; throws when a read or the commit failed (the caller retries). */
export async function evaluateThread(
	deps: TrackerDeps,
	commits: GroupCommit,
	threadId: string,
): Promise<void> {
	const record = deps.threads.get(threadId);
	if (record?.watched !== 1) return;
	const entry = deps.fleet.get(record.machine);
	if (entry?.machine.status().state !== "online") return;
	const shell = entry.machine.thread(threadId);
	if (!shell) {
		await forgetIfGone(deps, entry, record);
		return;
	}
	if (nothingToDo(record, shell)) return;
	// Only runs after the baseline make events: a followed window of the latest turns does.
	const { projection } = await entry.machine.getThread(threadId, {
		covers: (p) => coversAfter(p, record.baseline_ordinal),
	});
	// Deleted: what T3 answers 404 for; a followed stream may show it first (vanish.ts).
	if (projection.thread.deletedAt) {
		reportVanished(deps, entry, record);
		return;
	}
	const project = deps.fleet.project(entry, projection.thread.projectId);
	// Its project is not allowed now: leave the record as it is (hidden threads never reach
	// here through the store's reads), so if it is allowed again the catch-up reports what
	// happened meanwhile.
	if (!project) return;
	// The commit (FULL: an fsync, blocking the thread) joins this turn's batch and runs after
	// it: a t3_wait woken by the same change answers first (its reply is already on its way,
	// where it used to wait for the fsync: wake from the outcome frame p50 ~6 → ~3 ms), and
	// outcomes arriving together share one fsync instead of queueing behind one each.
	const emitted = await commits.run(() => {
		const fresh = deps.threads.get(threadId);
		if (fresh?.watched !== 1) return 0;
		const bodies = transitions(deps, entry, fresh, shell, projection, project);
		for (const body of bodies) {
			deps.outbox.insert({
				id: body.id,
				thread_id: threadId,
				thread_seq: body.thread_seq,
				dedupe_key: body.dedupe,
				type: body.event.type,
				origin: body.event.origin,
				body: JSON.stringify(body.event),
				created_at: deps.now(),
			});
		}
		deps.threads.observe(threadId, seen(shell), deps.now());
		deps.threads.setBaseline(
			threadId,
			watermark(projection, fresh.baseline_ordinal),
		);
		return bodies.length;
	});
	if (emitted) {
		deps.metrics.inc("t3code_mcp_events_emitted_total", {}, emitted);
		deps.onEmitted();
	}
}
