/**
 * Outcome detection: each run after the thread's baseline that reached a terminal status is one
 * `thread.<outcome>` event (a failed preparation has a key per attempt, as it may be retried).
 * The baseline only moves past runs that are all terminal, and a projection read must cover
 * every run after it.
 */
import { currentAttemptOrdinal } from "../t3/derive/current-errors.ts";
import {
	capText,
	finalAssistantMessage,
	runError,
	runOutcome,
} from "../t3/derive/derive.ts";
import { NO_FAILURE, runFailure } from "../t3/derive/run-failure.ts";
import {
	type Run,
	TERMINAL_RUN_STATUSES,
	type ThreadProjection,
} from "../t3/model.ts";
import type { EventBuilder } from "./event-building.ts";

const MESSAGE_CAP = 4_000;

/** Pushes the outcome event of every settled run after the baseline (`runs` by ordinal). */
export function outcomeEvents(builder: EventBuilder, runs: Run[]): void {
	const { deps, record, shell, projection, base, originOf, startedBy, push } =
		builder;
	for (const run of runs) {
		if (run.ordinal <= record.baseline_ordinal) continue;
		const outcome = runOutcome(run.status);
		if (!outcome) continue;
		const message = finalAssistantMessage(projection, run.id);
		const failure =
			outcome === "failed" ? runFailure(projection, run.id, shell) : NO_FAILURE;
		// A failed preparation may be retried (t3_manage retry_preparation: the same run runs
		// again), so it has a key of its own and the retried run's outcome is reported too; a
		// retry that fails preparing again is a new attempt (the first keeps the older key).
		const attempt = currentAttemptOrdinal(projection, run);
		const dedupe =
			failure.error_class === "workspace_preparation"
				? `run:${run.id}:preparation${attempt > 1 ? `:${attempt}` : ""}`
				: `run:${run.id}`;
		push(dedupe, (id, seq) => ({
			id,
			type: `thread.${outcome}`,
			occurred_at: run.completedAt ?? new Date(deps.now()).toISOString(),
			...base(run.id, run.status, originOf(run.id, run.userMessageId)),
			thread_seq: seq,
			message: message === null ? null : capText(message, MESSAGE_CAP),
			error: outcome === "completed" ? null : runError(projection, run.id),
			question: null,
			...failure,
			started_by: startedBy(run),
		}));
	}
}

/** Every run after `baseline` is in the projection (a window of the latest runs, or all). */
export function coversAfter(
	projection: ThreadProjection,
	baseline: number,
): boolean {
	let oldest = Number.POSITIVE_INFINITY;
	for (const run of projection.runs) oldest = Math.min(oldest, run.ordinal);
	return oldest <= baseline + 1;
}

/** Highest ordinal up to which every run is terminal: older runs can never produce events again. */
export function watermark(
	projection: ThreadProjection,
	current: number,
): number {
	let mark = current;
	for (const run of [...projection.runs].sort(
		(a, b) => a.ordinal - b.ordinal,
	)) {
		if (run.ordinal <= mark) continue;
		if (run.ordinal !== mark + 1 || !TERMINAL_RUN_STATUSES.has(run.status))
			break;
		mark = run.ordinal;
	}
	return mark;
}
