/** The webhook body (CONTRACT.md "Events"). */
import type { ProjectRef, QuestionShape } from "../threads/shapes.ts";

export type EventType =
	| "thread.completed"
	| "thread.interrupted"
	| "thread.failed"
	| "thread.question";

export interface EventBody {
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
	thread_seq: number;
	message: string | null;
	error: string | null;
	question: QuestionShape | null;
}

/** `evt_` + a time-ordered UUIDv7, stable across every retry of the event. */
export function eventId(): string {
	return `evt_${Bun.randomUUIDv7().replaceAll("-", "")}`;
}
