/**
 * Threads that vanish from their machine: T3 answers 404 for a thread it had (deleted by
 * another client, or the server lost its state). That settles as `outcome: "failed"`,
 * `run_status: "missing"`, `run_id: null` (CONTRACT.md). Our own `t3_delete` is not vanishing:
 * it announces itself here first (`beginOwnDelete`), so neither waits nor events call it missing.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadDeps } from "../deps.ts";

export const MISSING_STATUS = "missing";

/** The error text of a vanished thread (the wait result and the `thread.failed` event). */
export function missingError(threadId: string, machine: string): string {
	return `Thread "${threadId}" is gone from machine "${machine}": T3 no longer has it (deleted outside this connector, or the T3 server lost its state). Its runs cannot be followed any more.`;
}

/** The error text of a thread whose machine left the config while it was waited on (a reload). */
export function removedMachineError(threadId: string, machine: string): string {
	return `Machine "${machine}" was removed from the configuration (config reload) while waiting on thread "${threadId}": the thread cannot be followed from this connector any more. Add the machine back to the config to reach it again.`;
}

export const isNotFound = (error: unknown): boolean =>
	error instanceof T3Error && error.code === "NOT_FOUND";

/** Threads being deleted or deleted through this connector, for waits open on them. */
const ownDeletes = new Set<string>();
const OWN_DELETES_MAX = 10_000;

export function isOwnDelete(threadId: string): boolean {
	return ownDeletes.has(threadId);
}

/**
 * Call before sending `thread.delete` for `t3_delete`. The thread stops being watched at once
 * (so the tracker never reports it, even across a restart) and open waits on it end with a
 * "deleted" error instead of "missing". Then `confirm()` once T3 took the delete (the record is
 * removed: the thread leaves every list and watch), or `undo()` when it refused it.
 */
export function beginOwnDelete(
	deps: Pick<ThreadDeps, "threads" | "now">,
	threadId: string,
): { confirm(): void; undo(): void } {
	const record = deps.threads.get(threadId);
	ownDeletes.add(threadId);
	if (ownDeletes.size > OWN_DELETES_MAX)
		ownDeletes.delete(ownDeletes.values().next().value as string);
	if (record?.watched === 1)
		deps.threads.setWatched(threadId, false, record.origin, deps.now());
	return {
		confirm() {
			deps.threads.remove(threadId);
		},
		undo() {
			ownDeletes.delete(threadId);
			if (record?.watched === 1)
				deps.threads.setWatched(threadId, true, record.origin, deps.now());
		},
	};
}

/**
 * For a thread this connector tracks that no machine lists any more: the machine that answers
 * 404 for it (so it vanished), or undefined when that cannot be said (not tracked by us, deleted
 * by us, its machine not online, or T3 still has it).
 */
export async function vanishedFrom(
	deps: ThreadDeps,
	threadId: string,
): Promise<FleetMachine | undefined> {
	const record = deps.threads.get(threadId);
	if (!record || isOwnDelete(threadId)) return undefined;
	const entry = deps.fleet.get(record.machine);
	if (entry?.machine.status().state !== "online") return undefined;
	// A dispatch T3 has not confirmed yet may simply not have reached it.
	if (deps.dispatches.latestForThread(threadId)?.run_id === null)
		return undefined;
	try {
		await entry.machine.getThread(threadId);
		return undefined;
	} catch (error) {
		if (isNotFound(error)) return entry;
		throw error;
	}
}

/**
 * Whether T3 is known not to have the thread any more: every machine asked (`machine`, else all)
 * is online and answers 404 or reports it deleted. False when any cannot say.
 */
export async function knownGone(
	deps: Pick<ThreadDeps, "fleet">,
	threadId: string,
	machine?: string,
): Promise<boolean> {
	const entries =
		machine === undefined
			? deps.fleet.list()
			: [deps.fleet.get(machine)].filter((e) => e !== undefined);
	if (entries.length === 0) return false;
	for (const entry of entries) {
		if (entry.machine.status().state !== "online") return false;
		try {
			const { projection } = await entry.machine.getThread(threadId);
			if (!projection.thread.deletedAt) return false;
		} catch (error) {
			if (!isNotFound(error)) throw error;
		}
	}
	return true;
}
