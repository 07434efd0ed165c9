/**
 * `t3_manage` `retry_preparation`: a run whose workspace T3 failed to prepare (a bad base ref,
 * a dirty base: `error_class` `workspace_preparation`) is prepared again and then runs, through
 * `prepared-run.retry` (RELEASED-0.1.md §3). Default the thread's latest such run. A server
 * without the command (the pre-release engine) is said plainly.
 */

import { runFailure } from "../../t3/derive/run-failure.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import type { LocatedThread } from "../locate.ts";
import { isUnsupported, unsupportedError } from "../unsupported.ts";
import { readHeldToMode } from "./held-read.ts";

/** Sends the retry; returns the sequence T3 wrote it at. */
export async function retryPreparation(
	deps: ThreadDeps,
	located: LocatedThread,
	runId: string | undefined,
	reason: (error: T3Error) => string,
): Promise<number> {
	const { threadId, entry } = located;
	const projection = await readHeldToMode(deps, located, "retry_preparation");
	const failedPreparing = (id: string) =>
		runFailure(projection, id, located.shell).error_class ===
		"workspace_preparation";
	const runs = [...projection.runs].sort((a, b) => b.ordinal - a.ordinal);
	const run =
		runId === undefined
			? runs.find((r) => r.status === "failed" && failedPreparing(r.id))
			: runs.find((r) => r.id === runId);
	if (!run)
		throw new ThreadError(
			runId === undefined
				? `run_id: no run of thread "${threadId}" failed preparing its workspace; there is nothing to retry.`
				: `run_id: thread "${threadId}" has no run "${runId}". Take it from t3_thread runs[].id.`,
		);
	if (run.status !== "failed" || !failedPreparing(run.id))
		throw new ThreadError(
			`run_id: run "${run.id}" did not fail preparing its workspace (its status is ${run.status}); only such a run can be retried. Start a follow-up with t3_dispatch instead.`,
		);
	// The run is live again: its outcome is to be reported. The tracker had passed it, and
	// remembers it as failed, so failing again would look like no change. Done before the
	// command, so a quick new outcome is never missed (a refused retry reports nothing twice:
	// events are deduplicated).
	const record = deps.threads.get(threadId);
	if (record && record.baseline_ordinal >= run.ordinal)
		deps.threads.setBaseline(threadId, run.ordinal - 1);
	if (record?.last_run_id === run.id)
		deps.threads.observe(
			threadId,
			{
				runId: run.id,
				status: "preparing",
				requestId: record.last_request_id,
				title: record.title,
			},
			deps.now(),
		);
	try {
		const { sequence } = await entry.machine.dispatch({
			type: "prepared-run.retry",
			commandId: deps.newId(),
			threadId,
			runId: run.id,
		});
		return sequence;
	} catch (error) {
		if (isUnsupported(error))
			throw unsupportedError(
				entry.config.name,
				"retrying a workspace preparation",
				"prepared-run.retry",
				"fix the cause, then start a new thread with t3_dispatch.",
			);
		if (error instanceof T3Error && error.code === "REJECTED")
			throw new ThreadError(
				`T3 machine "${entry.config.name}" refused retry_preparation on thread "${threadId}": ${reason(error)}`,
			);
		throw error;
	}
}
