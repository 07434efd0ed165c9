/** The webhook body (CONTRACT.md "Events"). */
import type { RunFailure } from "../t3/derive/run-failure.ts";
import type { ProjectRef, QuestionShape } from "../threads/shapes.ts";

/**
 * Who started the run an event is about: this connector (`connector`), someone else through T3's
 * UI or another client (`user`), or T3 itself (`t3`: a wake, restart or usage-limit continuation);
 * null for an event about no run.
 */
export type StartedBy = "connector" | "user" | "t3";

export type EventType =
	| "thread.completed"
	| "thread.interrupted"
	| "thread.failed"
	| "thread.question";

export interface EventBody extends RunFailure {
	id: string;
	type: string;
	occurred_at: string;
	machine: string;
	thread_id: string;
	project: ProjectRef;
	title: string;
	run_id: string | null;
	run_status: string | null;
	origin: string | null;
	/** The client whose dispatch started the run; null for runs started elsewhere. */
	client: string | null;
	/** T3's own link to the thread (`t3-thread://v1/<id>`). */
	app_url: string;
	thread_seq: number;
	message: string | null;
	error: string | null;
	question: QuestionShape | null;
	started_by: StartedBy | null;
	/** The thread's current branch and worktree (null: not said, or the root checkout). */
	branch: string | null;
	worktree_path: string | null;
}

/** `evt_` + a time-ordered UUIDv7, stable across every retry of the event. */
export function eventId(): string {
	return `evt_${Bun.randomUUIDv7().replaceAll("-", "")}`;
}
