/**
 * A dispatch's answer: the run its message started (noted on the record), what T3 did with the
 * message, and where the thread works, from the projection read after sending.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { DispatchRecord } from "../../store/dispatches.ts";
import { findRunByMessageId } from "../../t3/derive/derive.ts";
import type { ProjectShell, ThreadProjection } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { projectRef } from "../shapes.ts";
import { deliveredAs } from "./delivered-as.ts";
import type { DispatchResult } from "./dispatch.ts";
import { forkedFrom } from "./fork.ts";
import { chosenTemporary, placeShape } from "./workspace.ts";

export function finish(
	deps: ThreadDeps,
	entry: FleetMachine,
	record: DispatchRecord,
	project: ProjectShell,
	projection: ThreadProjection,
	watched: boolean,
	before?: ThreadProjection,
): DispatchResult {
	const run = findRunByMessageId(projection, record.message_id);
	const place = placeShape({
		...projection.thread,
		branch: projection.thread.branch ?? requestedBranch(record),
	});
	if (run) {
		const write = () =>
			deps.dispatches.setRun(
				record.command_id,
				run.id,
				run.status,
				run.status === "queued",
			);
		// A held dispatch starting: no fsync of its own (a wait finds the run again anyway).
		if (deps.heldStart?.later) deps.heldStart.later(write);
		else write();
	}
	return {
		thread_id: record.thread_id,
		machine: entry.config.name,
		project: projectRef(project),
		run_id: run?.id ?? null,
		run_status: run?.status ?? "pending",
		queued: run?.status === "queued",
		runtime_mode: projection.thread.runtimeMode ?? "full-access",
		watched,
		origin: record.origin,
		delivered_as: deliveredAs(
			JSON.parse(record.payload) as Record<string, unknown>,
			record.message_id,
			run ?? null,
			projection,
			before,
		),
		...place,
		branch_temporary: chosenTemporary(
			place.branch,
			record.thread_id,
			(record.kind === "launch"
				? record
				: deps.dispatches.launchOf(record.thread_id)
			)?.payload,
		),
		forked_from: forkedFrom(projection.thread),
		// A pattern's placement is added by dispatch.ts, which made it.
		placement: null,
	};
}

/** The branch a launch asked for, until T3 reports the thread's. */
function requestedBranch(record: DispatchRecord): string | undefined {
	const payload = JSON.parse(record.payload) as {
		workspaceStrategy?: { branch?: unknown };
	};
	const branch = payload.workspaceStrategy?.branch;
	return typeof branch === "string" ? branch : undefined;
}
