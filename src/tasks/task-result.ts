/**
 * How a task's wait ends, as its result: the report a settled thread or a passed timeout makes
 * (what `t3_wait` would have reported), shaped by the MCP layer into the blocking call's result,
 * with the status message the task keeps beside it.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Fleet } from "../fleet/fleet.ts";
import type { TaskPlace } from "../store/tasks.ts";
import { NO_FAILURE } from "../t3/derive/run-failure.ts";
import type { ThreadDeps } from "../threads/deps.ts";
import {
	type Settled,
	timeoutReport,
	type WaitReport,
} from "../threads/wait/wait.ts";
import { elapsedS, type TaskRec } from "./task-record.ts";
import type { TaskShaper } from "./task-service.ts";

/** How a task's wait ended: a report, or why it cannot have one. */
export type WaitEnd = { report: WaitReport } | { error: string };

export const CANCELLED_MESSAGE =
	"Cancelled: this task no longer waits. The T3 run was not interrupted and keeps going (t3_interrupt stops it); call t3_wait to wait on it again.";

/** The wait's report once a waited-on thread settled, `elapsed` seconds after the task began. */
export function settledEnd(settled: Settled, elapsed: number): WaitEnd {
	const { note, ...rest } = settled;
	return {
		report: {
			...rest,
			elapsed_s: elapsed,
			...(note ? { note } : {}),
		},
	};
}

/** The wait's report once its explicit timeout passed: how the first thread is doing now. */
export function deadlineEnd(
	deps: ThreadDeps,
	fleet: Fleet,
	rec: TaskRec,
): WaitEnd {
	const first = rec.places[0] as TaskPlace;
	const entry = fleet.get(first.machine);
	const waited = elapsedS(rec, deps.now());
	const report: WaitReport = entry
		? timeoutReport(deps, { entry, threadId: first.thread_id }, waited)
		: {
				thread_id: first.thread_id,
				outcome: "timeout",
				run_id: null,
				run_status: null,
				message: null,
				error: null,
				question: null,
				...NO_FAILURE,
				elapsed_s: 0,
			};
	return { report: { ...report, elapsed_s: waited } };
}

/** The completed task's result (a failure of its own if shaping threw) and status message. */
export function taskResult(
	deps: ThreadDeps,
	shape: TaskShaper,
	rec: TaskRec,
	end: WaitEnd,
): { result: CallToolResult; message: string } {
	let result: CallToolResult;
	try {
		result = shape(rec.row.tool, rec.base, end);
	} catch (error) {
		deps.log.error("task result could not be built", {
			task: rec.row.task_id,
			error,
		});
		result = {
			content: [
				{
					type: "text",
					text: `${rec.row.tool} failed unexpectedly; the server log has the details.`,
				},
			],
			isError: true,
		};
	}
	const message =
		"report" in end
			? `The wait ended with outcome "${end.report.outcome}" on thread ${end.report.thread_id}.`
			: end.error;
	return { result, message };
}
