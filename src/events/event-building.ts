/**
 * Event building for one evaluation of a watched thread: the fields all its events share, who
 * started a run and on whose behalf, and each new row (skipped when its dedupe key was emitted
 * already, else the thread's next sequence number). `transitions` collects, in the order they
 * happened, the outcome events and then the question event a projection shows.
 */

import type { FleetMachine } from "../fleet/fleet.ts";
import type { ThreadRecord } from "../store/threads.ts";
import { startedByT3 } from "../t3/derive/run-starter.ts";
import type { Run, ThreadProjection, ThreadShell } from "../t3/model.ts";
import { placeShape } from "../threads/dispatch/workspace.ts";
import { appUrl, projectRef } from "../threads/shapes.ts";
import { answeredEvent } from "./answered-event.ts";
import { type EventBody, eventId, type StartedBy } from "./event.ts";
import { outcomeEvents } from "./outcome-events.ts";
import { questionEvent } from "./question-event.ts";
import type { TrackerDeps } from "./tracker.ts";

/** An event to insert into the outbox, with its dedupe key and thread sequence number. */
export interface PendingEvent {
	id: string;
	dedupe: string;
	thread_seq: number;
	event: EventBody;
}

type EventBase = Pick<
	EventBody,
	| "machine"
	| "thread_id"
	| "project"
	| "title"
	| "run_id"
	| "run_status"
	| "origin"
	| "client"
	| "app_url"
	| "branch"
	| "worktree_path"
>;

/** What the outcome and question events of one evaluation are built from. */
export interface EventBuilder {
	deps: TrackerDeps;
	entry: FleetMachine;
	record: ThreadRecord;
	shell: ThreadShell;
	projection: ThreadProjection;
	/** The origin of the dispatch that started the run, else the thread's. */
	originOf(runId: string, userMessageId: string | null): string | null;
	startedBy(run: Run): StartedBy;
	/** The fields every event of this thread carries, for one run (or none). */
	base(
		runId: string | null,
		runStatus: string | null,
		origin: string | null,
	): EventBase;
	/** Adds the event unless its dedupe key was emitted already. */
	push(dedupe: string, build: (id: string, seq: number) => EventBody): void;
}

function createEventBuilder(
	deps: TrackerDeps,
	entry: FleetMachine,
	record: ThreadRecord,
	shell: ThreadShell,
	projection: ThreadProjection,
	project: Parameters<typeof projectRef>[0],
	out: PendingEvent[],
): EventBuilder {
	const dispatchOf = (runId: string, userMessageId: string | null) =>
		deps.dispatches.byRunId(runId) ??
		(userMessageId ? deps.dispatches.byMessageId(userMessageId) : undefined);
	return {
		deps,
		entry,
		record,
		shell,
		projection,
		originOf: (runId, userMessageId) =>
			dispatchOf(runId, userMessageId)?.origin ?? record.origin,
		startedBy: (run) =>
			dispatchOf(run.id, run.userMessageId)
				? "connector"
				: startedByT3(projection, run)
					? "t3"
					: "user",
		base: (runId, runStatus, origin) => ({
			machine: entry.config.name,
			thread_id: record.thread_id,
			project: projectRef(project),
			title: shell.title,
			run_id: runId,
			run_status: runStatus,
			origin,
			client: runId !== null && dispatchOf(runId, null) ? record.client : null,
			app_url: appUrl(record.thread_id),
			...placeShape({
				branch: shell.branch ?? projection.thread.branch,
				worktreePath: shell.worktreePath ?? projection.thread.worktreePath,
			}),
		}),
		push(dedupe, build) {
			if (deps.outbox.has(record.thread_id, dedupe)) return;
			const id = eventId();
			const seq = deps.threads.nextSeq(record.thread_id);
			out.push({ id, dedupe, thread_seq: seq, event: build(id, seq) });
		},
	};
}

/** The events this projection shows that were not emitted yet, in the order they happened. */
export function transitions(
	deps: TrackerDeps,
	entry: FleetMachine,
	record: ThreadRecord,
	shell: ThreadShell,
	projection: ThreadProjection,
	project: Parameters<typeof projectRef>[0],
): PendingEvent[] {
	const out: PendingEvent[] = [];
	const builder = createEventBuilder(
		deps,
		entry,
		record,
		shell,
		projection,
		project,
		out,
	);
	const runs = [...projection.runs].sort((a, b) => a.ordinal - b.ordinal);
	// The answer came before any outcome it let the run reach.
	answeredEvent(builder, runs);
	outcomeEvents(builder, runs);
	questionEvent(builder, runs);
	return out;
}
