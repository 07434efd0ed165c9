/**
 * Which of a run's `error` items speak for it now. A run's items outlive its attempts (§7.3):
 * after `prepared-run.retry`, or any new attempt, the failed attempt's `error` item is still
 * among the run's items, so "the run's last error item" can be a failure the run got over.
 * The rule: a run has an error only once it ended without completing (`failed`, `interrupted`,
 * `cancelled`, `rolled_back`); then its error items newest first (by ordinal), leaving out
 * those older than the first item its current attempt's provider turn wrote. A failure before
 * any provider turn (a workspace preparation) belongs to no turn; T3 writes it anew (a higher
 * ordinal) when the same run fails preparing again, so the newest stays the right one; a
 * later attempt that stopped before its provider without failing has none of its own.
 */
import type { Run, ThreadProjection, TurnItem } from "../model.ts";

const ERROR_STATES: ReadonlySet<string> = new Set([
	"failed",
	"interrupted",
	"cancelled",
	"rolled_back",
]);

type AttemptRow = { id?: unknown; runId?: unknown; attemptOrdinal?: unknown };
type TurnRow = { id?: unknown; runAttemptId?: unknown };

const rows = <T>(value: unknown): T[] =>
	Array.isArray(value) ? (value as T[]) : [];

/** The attempt the run is on: `activeAttemptId`, else its highest attempt ordinal. */
function currentAttemptId(
	projection: ThreadProjection,
	run: Run,
): string | null {
	if (typeof run.activeAttemptId === "string") return run.activeAttemptId;
	let best: AttemptRow | null = null;
	for (const a of rows<AttemptRow>(projection.attempts))
		if (
			a.runId === run.id &&
			(!best || Number(a.attemptOrdinal) > Number(best.attemptOrdinal))
		)
			best = a;
	return typeof best?.id === "string" ? best.id : null;
}

/** The ordinal before which the run's items belong to earlier attempts (0: none known). */
function attemptStart(
	projection: ThreadProjection,
	run: Run,
	items: TurnItem[],
): number {
	const attemptId = currentAttemptId(projection, run);
	if (attemptId === null) return 0;
	const turns = new Set(
		rows<TurnRow>(projection.providerTurns)
			.filter((t) => t.runAttemptId === attemptId)
			.map((t) => t.id),
	);
	let start = Number.POSITIVE_INFINITY;
	for (const item of items)
		if (turns.has(item.providerTurnId) && (item.ordinal ?? 0) < start)
			start = item.ordinal ?? 0;
	return Number.isFinite(start) ? start : 0;
}

/** The ordinal of the attempt the run is on (1 when T3 says nothing of attempts). */
export function currentAttemptOrdinal(
	projection: ThreadProjection,
	run: Run,
): number {
	const id = currentAttemptId(projection, run);
	const attempt = rows<AttemptRow>(projection.attempts).find(
		(a) => a.id === id,
	);
	const ordinal = Number(attempt?.attemptOrdinal);
	return Number.isInteger(ordinal) && ordinal > 0 ? ordinal : 1;
}

/** Whether the run is in a state that has an error at all. */
export function endedWithoutCompleting(run: Run): boolean {
	return ERROR_STATES.has(run.status);
}

/** The run's current `error` items, newest first; none while it is busy or once it completed. */
export function currentErrorItems(
	projection: ThreadProjection,
	runId: string,
): TurnItem[] {
	const run = projection.runs.find((r) => r.id === runId);
	if (!run || !endedWithoutCompleting(run)) return [];
	const items = projection.turnItems.filter((i) => i.runId === runId);
	const start = attemptStart(projection, run, items);
	// A later attempt stopped before its provider turn (interrupted while preparing): any
	// error item is an earlier attempt's; only failing writes one of its own.
	if (
		start === 0 &&
		run.status !== "failed" &&
		currentAttemptOrdinal(projection, run) > 1
	)
		return [];
	return items
		.filter((i) => i.type === "error" && (i.ordinal ?? 0) >= start)
		.reverse() // among equal ordinals the later row is the newer
		.sort((a, b) => (b.ordinal ?? 0) - (a.ordinal ?? 0));
}
