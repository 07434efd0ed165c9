/**
 * A watched thread that left the shell or that T3 shows deleted: archived, it is quietly no
 * longer watched; gone (404 or deleted), it gets one `thread.failed` event with run_status
 * "missing" and is marked missing. Threads tracked but not watched: unwatched-vanish.ts.
 */

import type { FleetMachine } from "../fleet/fleet.ts";
import type { ThreadRecord } from "../store/threads.ts";
import { NO_FAILURE } from "../t3/derive/run-failure.ts";
import { T3Error } from "../t3/machine-api.ts";
import { appUrl, projectRef } from "../threads/shapes.ts";
import { MISSING_STATUS, missingError } from "../threads/wait/vanish.ts";
import { type EventBody, eventId } from "./event.ts";
import type { TrackerDeps } from "./tracker.ts";

/** A watched thread that left the shell: stop watching it if T3 no longer has it. */
export async function forgetIfGone(
	deps: TrackerDeps,
	entry: FleetMachine,
	record: ThreadRecord,
): Promise<void> {
	// A dispatch not yet confirmed by T3 (its launch may still be on the way, or retried after
	// a lost reply) is not gone: the shell simply has not listed it yet.
	if (deps.dispatches.latestForThread(record.thread_id)?.run_id === null)
		return;
	try {
		const { projection } = await entry.machine.getThread(record.thread_id);
		if (projection.thread.deletedAt) {
			reportVanished(deps, entry, record);
			return;
		}
		// Archived: nothing more will happen to it; stop watching quietly. Otherwise the shell
		// simply has not listed it yet (a dispatch racing a reconnect): keep watching.
		if (projection.thread.archivedAt) {
			deps.threads.setWatched(
				record.thread_id,
				false,
				record.origin,
				deps.now(),
			);
			deps.log.info("stopped watching an archived thread", {
				threadId: record.thread_id,
			});
		}
	} catch (error) {
		if (error instanceof T3Error && error.code === "NOT_FOUND") {
			reportVanished(deps, entry, record);
			return;
		}
		throw error;
	}
}

/**
 * T3 answers 404 for a watched thread: it vanished (deleted elsewhere, or the server lost its
 * state; our own t3_delete unwatches first, so it never gets here). One `thread.failed` event
 * with run_status "missing", then the thread is no longer watched.
 */
export function reportVanished(
	deps: TrackerDeps,
	entry: FleetMachine,
	record: ThreadRecord,
): void {
	const threadId = record.thread_id;
	const project = deps.fleet.project(entry, record.project_id);
	// A project the machine still lists but the allowlist hides: its threads do not exist for us.
	const hidden =
		!project &&
		entry.machine.projects().some((p) => p.id === record.project_id);
	const emitted = deps.db.transaction(() => {
		const fresh = deps.threads.get(threadId);
		if (fresh?.watched !== 1) return 0;
		deps.threads.markMissing(threadId, deps.now());
		if (hidden || deps.outbox.has(threadId, "missing")) return 0;
		const id = eventId();
		const seq = deps.threads.nextSeq(threadId);
		const event: EventBody = {
			id,
			type: "thread.failed",
			occurred_at: new Date(deps.now()).toISOString(),
			machine: entry.config.name,
			thread_id: threadId,
			// A server that lost its state may have lost the project too: then only its id is known.
			project: project
				? projectRef(project)
				: { id: record.project_id, title: "", path: "" },
			title: fresh.title,
			run_id: null,
			run_status: MISSING_STATUS,
			origin: fresh.origin,
			client: null,
			app_url: appUrl(threadId),
			thread_seq: seq,
			message: null,
			error: missingError(threadId, entry.config.name),
			question: null,
			...NO_FAILURE,
			started_by: null,
			branch: null,
			worktree_path: null,
		};
		deps.outbox.insert({
			id,
			thread_id: threadId,
			thread_seq: seq,
			dedupe_key: "missing",
			type: event.type,
			origin: event.origin,
			body: JSON.stringify(event),
			created_at: deps.now(),
		});
		return 1;
	})();
	deps.log.info("a watched thread vanished from its machine", {
		threadId,
		machine: entry.config.name,
	});
	if (emitted) {
		deps.metrics.inc("t3code_mcp_events_emitted_total", {}, emitted);
		deps.onEmitted();
	}
}
