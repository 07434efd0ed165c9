/**
 * `t3_interrupt`: `run.interrupt` on the thread's active run with `holdQueue: true`, so queued
 * runs do not start by themselves. It reports the status T3 shows afterwards and never claims
 * the run stopped before T3 says so (OBSERVED.md §5.7: an interrupt can leave a run running).
 */
import { latestRun } from "../t3/derive.ts";
import { T3Error } from "../t3/machine-api.ts";
import { BUSY_RUN_STATUSES } from "../t3/model.ts";
import type { ThreadDeps } from "./deps.ts";
import { locateThread, readDetail } from "./locate.ts";

export async function interrupt(deps: ThreadDeps, threadId: string) {
	const located = await locateThread(deps, threadId);
	const { projection } = await readDetail(located, true);
	const shell = located.shell ?? projection.thread;
	const active = shell.activeRunId
		? projection.runs.find((r) => r.id === shell.activeRunId)
		: projection.runs
				.filter((r) => BUSY_RUN_STATUSES.has(r.status) && r.status !== "queued")
				.at(-1);
	if (!active) {
		const latest = latestRun(projection);
		return {
			result: {
				thread_id: threadId,
				run_id: latest?.id ?? null,
				run_status: latest?.status ?? "idle",
			},
			note: `Nothing to interrupt: thread "${threadId}" has no active run${latest ? ` (latest run is ${latest.status})` : ""}.`,
		};
	}
	const command = {
		type: "run.interrupt",
		commandId: deps.newId(),
		threadId,
		runId: active.id,
		reason: "Interrupted through t3code-mcp",
		holdQueue: true,
	};
	try {
		await located.entry.machine.dispatch(command);
	} catch (error) {
		// Pre-release servers reject the unknown field at decode time (a Die): same command without it.
		if (!(error instanceof T3Error && error.code === "DEFECT")) throw error;
		const { holdQueue: _, ...plain } = command;
		await located.entry.machine.dispatch(plain);
	}
	const after = (await located.entry.machine.getThread(threadId)).projection;
	const run = after.runs.find((r) => r.id === active.id);
	return {
		result: {
			thread_id: threadId,
			run_id: active.id,
			run_status: run?.status ?? active.status,
		},
		note: undefined,
	};
}
