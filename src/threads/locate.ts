/**
 * Finds a thread on whichever machine has it: first the in-memory shells, then (for a thread
 * we track but the shell no longer lists, e.g. archived) the machine's HTTP thread route.
 * Threads of projects outside the allowlist are reported exactly like unknown ones.
 */

import type { FleetMachine } from "../fleet/fleet.ts";
import type { HeldHead } from "../store/held-store.ts";
import type { OperationPlace } from "../store/operations.ts";
import { T3Error } from "../t3/machine-api.ts";
import type { ProjectShell, ThreadDetail, ThreadShell } from "../t3/model.ts";
import type { ThreadDeps } from "./deps.ts";
import { ThreadError } from "./errors.ts";

export interface LocatedThread {
	entry: FleetMachine;
	threadId: string;
	/** The live shell entry; undefined when the thread was found over HTTP only. */
	shell: ThreadShell | undefined;
	project: ProjectShell;
	/** Present when the lookup already read the full thread. */
	detail?: ThreadDetail;
}

const READY_WAIT_MS = 5_000;

/** The thread's runtime mode: the fresh projection's, else the shell's (it may lag a change). */
export const runtimeModeOf = (
	located: LocatedThread,
	projection: { thread: { runtimeMode?: string } },
): string | undefined =>
	projection.thread.runtimeMode ?? located.shell?.runtimeMode;

export function notFound(deps: ThreadDeps, threadId: string): ThreadError {
	const down = deps.fleet
		.list()
		.filter((e) => e.machine.status().state !== "online")
		.map((e) => `${e.config.name} (${e.machine.status().state})`);
	const hint = down.length
		? ` Not reachable right now: ${down.join(", ")}; the thread may be there.`
		: "";
	return new ThreadError(
		`Thread "${threadId}" was not found on any machine.${hint} Call t3_threads to find threads on every machine (archived: true for archived ones).`,
	);
}

/** Waits (bounded) for machines still connecting, so a call right after start-up sees their shells. */
async function settleConnecting(deps: ThreadDeps): Promise<void> {
	const connecting = deps.fleet
		.list()
		.filter((e) => e.machine.status().state === "connecting");
	await Promise.all(
		connecting.map((e) => e.machine.ready(READY_WAIT_MS).catch(() => {})),
	);
}

/**
 * The caller's held dispatch by thread id, not started yet (its own; every one for a caller
 * with every right), or undefined (CONTRACT.md "One pool", "Holding").
 */
export function heldOf(
	deps: ThreadDeps,
	threadId: string,
): HeldHead | undefined {
	const head = deps.holding?.get(threadId);
	if (!head || head.status === "started") return undefined;
	if (deps.client && head.client !== deps.client.name) return undefined;
	return head;
}

/** The refusal of an operation on a thread that is a held dispatch (not started yet). */
export function notStartedYet(head: HeldHead): ThreadError {
	const how =
		head.status === "withdrawn"
			? "it was withdrawn and never started"
			: head.status === "never_started"
				? `it never started (${head.error ?? "unknown"})`
				: "it is a held dispatch that has not started yet (it starts when a machine has room)";
	return new ThreadError(
		`Thread "${head.thread_id}" not started yet: ${how}. t3_wait waits for it to start and for its run; t3_interrupt withdraws it; t3_thread shows where it stands.`,
	);
}

export async function locateThread(
	deps: ThreadDeps,
	threadId: string,
): Promise<LocatedThread> {
	const held = heldOf(deps, threadId);
	if (held) throw notStartedYet(held);
	let found = deps.fleet.locate(threadId);
	if (!found) {
		await settleConnecting(deps);
		found = deps.fleet.locate(threadId);
	}
	if (found) {
		return {
			entry: found.entry,
			threadId,
			shell: found.thread,
			project: found.project,
		};
	}
	const record = deps.threads.get(threadId);
	const candidates = record
		? [deps.fleet.get(record.machine)].filter(
				(e): e is FleetMachine => e !== undefined,
			)
		: deps.fleet.list();
	for (const entry of candidates) {
		if (entry.machine.status().state !== "online") continue;
		try {
			const detail = await entry.machine.getThread(threadId);
			const project = deps.fleet.project(
				entry,
				detail.projection.thread.projectId,
			);
			if (!project) continue;
			return {
				entry,
				threadId,
				shell: entry.machine.thread(threadId),
				project,
				detail,
			};
		} catch (error) {
			if (error instanceof T3Error && error.code === "NOT_FOUND") continue;
			throw error;
		}
	}
	throw notFound(deps, threadId);
}

/** Where a located thread lives, as an idempotency key's row keeps it (operations.ts). */
export function placeOf(located: LocatedThread): OperationPlace {
	return {
		machine: located.entry.config.name,
		project_id: located.project.id,
		project_title: located.project.title,
		project_path: located.project.workspaceRoot,
	};
}

/** Reads the full thread, reusing what the lookup already fetched. */
export async function readDetail(
	located: LocatedThread,
	fresh = false,
): Promise<ThreadDetail> {
	if (located.detail && !fresh) return located.detail;
	located.detail = await located.entry.machine.getThread(located.threadId);
	return located.detail;
}
