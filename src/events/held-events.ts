/**
 * The events of a held dispatch (CONTRACT.md "One pool", "Holding"): `thread.started` when it
 * starts, `thread.failed` with `run_status: "never_started"` when it never can. None while it is
 * held, none on a withdrawal. Written in the transaction that ends the held row, through the same
 * outbox as every thread event (at least once, the same id on every retry, in order per thread:
 * `thread.started` comes before the run's outcome).
 */
import type { Outbox } from "../store/outbox.ts";
import type { ThreadStore } from "../store/threads.ts";
import { NO_FAILURE } from "../t3/derive/run-failure.ts";
import { appUrl } from "../threads/shapes.ts";
import { eventId } from "./event.ts";

export interface HeldEventDeps {
	outbox: Outbox;
	threads: ThreadStore;
	now: () => number;
}

/** What the events say of a held dispatch. */
export interface HeldEventSource {
	thread_id: string;
	client: string;
	machine: string;
	named: number;
	project: string;
	title: string;
	origin: string | null;
}

export function heldEvents(deps: HeldEventDeps) {
	const insert = (
		threadId: string,
		seq: number,
		dedupe: string,
		type: string,
		origin: string | null,
		body: Record<string, unknown>,
	) => {
		if (deps.outbox.has(threadId, dedupe)) return;
		const id = eventId();
		deps.outbox.insert({
			id,
			thread_id: threadId,
			thread_seq: seq,
			dedupe_key: dedupe,
			type,
			origin,
			body: JSON.stringify({ id, type, ...body, thread_seq: seq }),
			created_at: deps.now(),
		});
	};
	return {
		started(
			head: HeldEventSource,
			started: {
				machine: string;
				project: { id: string; title: string; path: string };
				runId: string | null;
				placement: unknown;
			},
		): void {
			const record = deps.threads.get(head.thread_id);
			if (record?.watched !== 1) return;
			insert(
				head.thread_id,
				deps.threads.nextSeq(head.thread_id),
				"started",
				"thread.started",
				head.origin,
				{
					occurred_at: new Date(deps.now()).toISOString(),
					machine: started.machine,
					thread_id: head.thread_id,
					project: started.project,
					title: record.title,
					run_id: started.runId,
					origin: head.origin,
					client: head.client,
					placement: started.placement ?? null,
					app_url: appUrl(head.thread_id),
				},
			);
		},
		neverStarted(head: HeldEventSource, error: string, watched: boolean): void {
			if (!watched) return;
			insert(
				head.thread_id,
				Math.max(1, deps.threads.nextSeq(head.thread_id)),
				"never_started",
				"thread.failed",
				head.origin,
				{
					occurred_at: new Date(deps.now()).toISOString(),
					machine: head.named ? head.machine : null,
					thread_id: head.thread_id,
					project: { id: null, title: head.project, path: null },
					title: head.title,
					run_id: null,
					run_status: "never_started",
					origin: head.origin,
					client: head.client,
					message: null,
					error: `The held dispatch never started: ${error}`,
					question: null,
					// Every key a thread.failed carries, so a receiver reads one shape per type.
					...NO_FAILURE,
					app_url: appUrl(head.thread_id),
					started_by: null,
					branch: null,
					worktree_path: null,
				},
			);
		},
	};
}
