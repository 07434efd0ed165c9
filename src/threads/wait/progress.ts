/**
 * What a wait says about the run while it goes (progress notifications, a task's status message,
 * a timeout's text): its status, the time since the run started (not since the wait did), its
 * current step and its latest message. The run's start and step come from the thread's followed
 * projection, held in memory while a wait follows it, so a progress tick sends no request.
 * All T3 text is masked and capped (capText).
 */
import { capText, currentStep, latestRun } from "../../t3/derive/derive.ts";
import type { LocatedThread } from "../locate.ts";

/** When the run waited on began, and what it is doing, as far as this connector can tell. */
export interface RunProgress {
	/** Epoch ms the run started (or was requested, while it has not started); null when unknown. */
	since: number | null;
	/** What `since` is: the run's start, or its request while it waits to start. */
	sinceWhat: "started" | "requested" | null;
	step: string | null;
}

const ms = (iso: string | null | undefined) => {
	const at = iso ? Date.parse(iso) : Number.NaN;
	return Number.isNaN(at) ? null : at;
};

/**
 * When the run began and what it is doing, from the followed projection: the run `runId` (the
 * one we dispatched), else the shell's active or latest run.
 */
export function runProgress(
	first: Pick<LocatedThread, "entry" | "threadId">,
	runId: string | null = null,
): RunProgress {
	const { machine } = first.entry;
	const projection = machine.followedProjection?.(first.threadId);
	if (!projection) return { since: null, sinceWhat: null, step: null };
	const shell = machine.thread(first.threadId);
	const wanted = runId ?? shell?.activeRunId ?? shell?.latestRunId ?? null;
	const run =
		projection.runs.find((r) => r.id === wanted) ?? latestRun(projection);
	if (!run) return { since: null, sinceWhat: null, step: null };
	const started = ms(run.startedAt);
	const requested = ms(run.requestedAt);
	return {
		since: started ?? requested,
		sinceWhat:
			started !== null ? "started" : requested !== null ? "requested" : null,
		step: currentStep(projection, run.id),
	};
}

/**
 * What a run is doing, in one line: "running, 35 s elapsed since the run started; step: ls;
 * latest: …". `waitedS` (how long the caller has waited) stands in when the run's start is not
 * known here (a thread not followed). `runId`: the run we dispatched, when we did.
 */
export function statusLine(
	first: Pick<LocatedThread, "entry" | "threadId">,
	at: { now: number; waitedS: number; runId?: string | null },
): string {
	const { machine } = first.entry;
	const shell = machine.thread(first.threadId);
	const progress = runProgress(first, at.runId);
	const { now, waitedS } = at;
	const elapsed =
		progress.since === null
			? `${Math.round(waitedS)} s elapsed waiting (the run's start is not known here)`
			: `${Math.max(0, Math.round((now - progress.since) / 1000))} s elapsed since the run ${progress.sinceWhat === "started" ? "started" : "was requested"}`;
	const step = progress.step?.split("\n")[0] ?? "";
	// The newest T3 sends shells without the message (idx 70189692800): the followed stream has it.
	const latest =
		shell?.latestVisibleMessage ?? machine.followedMessage?.(first.threadId);
	const last = latest?.text?.split("\n")[0] ?? "";
	return `${shell?.status ?? "unknown"}, ${elapsed}${step ? `; step: ${capText(step, 120)}` : ""}${last ? `; latest: ${capText(last, 120)}` : ""}`;
}
