/**
 * When each run's outcome came to be and when the simulator first put it on the wire, on any
 * stream or read: a thread stream's terminal `run.updated` or a snapshot (of the thread, or of
 * the shell listing it) built after the run ended, a shell `thread.updated` of that thread built
 * after the run ended (its sequence is at or past the run's end; a client reading
 * the thread then learns the outcome, even when a later run already replaced it in the shell),
 * or an HTTP read answered after the run ended (the thread's projection, or the shell snapshot
 * listing the thread). Benchmarks measure from that first moment: nothing can know sooner.
 * Times are epoch milliseconds with sub-millisecond precision, comparable across processes.
 */
import { TERMINAL_RUN_STATUSES } from "../../t3/model.ts";
import { wallMs } from "../wall-clock.ts";

export interface RunOutcomeTimes {
	runId: string;
	threadId: string;
	status: string;
	/** The run's terminal row was written. */
	endedAt: number;
	/** The first frame showing it was sent (undefined until one was). */
	sentAt?: number;
	via?: "thread" | "shell" | "http";
}

export interface OutcomeTimes {
	/** A store entry: notes terminal `run.updated` rows. */
	noteEvent(event: Record<string, unknown> | null, sequence: number): void;
	/** Values of a Chunk just sent. */
	noteSent(values: unknown[]): void;
	/** An HTTP answer showing these threads' current state (projection or shell snapshot) was sent. */
	noteRead(threadIds: Iterable<string>): void;
	get(runId: string): RunOutcomeTimes | undefined;
	all(): RunOutcomeTimes[];
	/** Shell `thread.updated` items sent so far (load benchmarks size their rate by it). */
	shellUpdates(): number;
}

export { wallMs } from "../wall-clock.ts";

export function createOutcomeTimes(): OutcomeTimes {
	const runs = new Map<string, RunOutcomeTimes>();
	/** Per thread, ended runs no frame has shown yet, with the sequence of their end. */
	const unsent = new Map<string, Map<string, number>>();
	let shellUpdates = 0;
	const sent = (
		runId: unknown,
		via: "thread" | "shell" | "http",
		at: number,
	) => {
		if (typeof runId !== "string") return;
		const entry = runs.get(runId);
		if (entry && entry.sentAt === undefined) {
			entry.sentAt = at;
			entry.via = via;
			unsent.get(entry.threadId)?.delete(runId);
		}
	};
	/** A frame showing the thread as of `sequence`: every run that ended by then shows in it. */
	const shownUpTo = (
		threadId: unknown,
		sequence: number,
		via: "thread" | "shell",
		at: number | undefined,
	): number | undefined => {
		const pending = unsent.get(String(threadId));
		if (!pending?.size) return at;
		for (const [runId, endSeq] of [...pending])
			if (endSeq <= sequence) {
				at ??= wallMs();
				sent(runId, via, at);
			}
		return at;
	};
	return {
		noteEvent(event, sequence) {
			if (event?.type !== "run.updated") return;
			const run = event.payload as Record<string, unknown> | null;
			const status = run?.status;
			if (typeof status !== "string" || !TERMINAL_RUN_STATUSES.has(status))
				return;
			if (typeof run?.id !== "string" || runs.has(run.id)) return;
			const threadId = String(run.threadId);
			runs.set(run.id, { runId: run.id, threadId, status, endedAt: wallMs() });
			const pending = unsent.get(threadId) ?? new Map<string, number>();
			pending.set(run.id, sequence);
			unsent.set(threadId, pending);
		},
		noteSent(values) {
			let at: number | undefined;
			for (const value of values as Record<string, unknown>[]) {
				if (value?.kind === "event") {
					const event = value.event as Record<string, unknown> | undefined;
					if (event?.type !== "run.updated") continue;
					const run = event.payload as Record<string, unknown> | undefined;
					if (!TERMINAL_RUN_STATUSES.has(String(run?.status))) continue;
					at ??= wallMs();
					sent(run?.id, "thread", at);
				} else if (value?.kind === "thread.updated") {
					shellUpdates++;
					const thread = value.thread as Record<string, unknown> | undefined;
					at = shownUpTo(thread?.id, Number(value.sequence), "shell", at);
				} else if (value?.kind === "snapshot") {
					// A subscription's first frame: the thread's projection, or the whole shell.
					const projection = value.projection as
						| { thread?: { id?: unknown } }
						| undefined;
					const snapshot = value.snapshot as
						| { snapshotSequence?: unknown; threads?: { id?: unknown }[] }
						| undefined;
					if (projection)
						at = shownUpTo(
							projection.thread?.id,
							Number(value.snapshotSequence),
							"thread",
							at,
						);
					for (const thread of snapshot?.threads ?? [])
						at = shownUpTo(
							thread.id,
							Number(snapshot?.snapshotSequence),
							"shell",
							at,
						);
				}
			}
		},
		noteRead(threadIds) {
			let at: number | undefined;
			for (const threadId of threadIds) {
				const pending = unsent.get(threadId);
				if (!pending?.size) continue;
				// The answer is the thread's state now: every run that ended before it shows.
				at ??= wallMs();
				for (const runId of [...pending.keys()]) sent(runId, "http", at);
			}
		},
		get: (runId) => runs.get(runId),
		all: () => [...runs.values()],
		shellUpdates: () => shellUpdates,
	};
}
