/**
 * Question detection: a pending runtime request the projection confirms is one `thread.question`
 * event (keyed by the request), about the active run or else the latest one, dated when the
 * shell says the request was made.
 */
import { pendingQuestion } from "../t3/derive/derive.ts";
import { NO_FAILURE } from "../t3/derive/run-failure.ts";
import type { Run } from "../t3/model.ts";
import { questionShape } from "../threads/shapes.ts";
import type { EventBuilder } from "./event-building.ts";

/** Pushes the event of the thread's pending question, if it has one (`runs` by ordinal). */
export function questionEvent(builder: EventBuilder, runs: Run[]): void {
	const { deps, entry, record, shell, projection, base, originOf, startedBy } =
		builder;
	const question = pendingQuestion(
		projection,
		shell.pendingRuntimeRequest ?? null,
		{ machine: entry.config.name },
	);
	if (!question) return;
	const questionRun =
		runs.find((r) => r.id === shell.activeRunId) ?? runs.at(-1);
	const createdAt =
		shell.pendingRuntimeRequest?.id === question.request_id
			? shell.pendingRuntimeRequest.createdAt
			: undefined;
	builder.push(`request:${question.request_id}`, (id, seq) => ({
		id,
		type: "thread.question",
		occurred_at: createdAt ?? new Date(deps.now()).toISOString(),
		...base(
			questionRun?.id ?? null,
			questionRun?.status ?? null,
			questionRun
				? originOf(questionRun.id, questionRun.userMessageId)
				: record.origin,
		),
		thread_seq: seq,
		message: null,
		error: null,
		question: questionShape(question),
		...NO_FAILURE,
		started_by: questionRun ? startedBy(questionRun) : null,
	}));
}
