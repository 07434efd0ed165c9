/**
 * What the console shows of a thread in its lists: one row, from a `t3_threads` row or a live
 * shell change, read through the signed-in client's scoped services. Every T3 text is masked
 * here (and escaped by JSX where it is drawn).
 */
import type { Services } from "../services.ts";
import type { ThreadShell } from "../t3/model.ts";
import type { ListedThread } from "../threads/read/list.ts";
import {
	type Pending,
	pendingOf,
	type ThreadState,
	threadState,
} from "../threads/read/thread-state.ts";
import { maskSecrets, redact } from "../util/redact.ts";

export interface ConsoleRow {
	thread_id: string;
	machine: string;
	project: string;
	title: string;
	status: string;
	state: ThreadState;
	pending: Pending | null;
	/** Epoch ms since the pending request was made (T3's time), or null. */
	pending_since: number | null;
	/** Epoch ms of T3's last update of the thread, or null. */
	updated_at: number | null;
	client: string | null;
	/** Why the latest run failed (T3's words, masked and capped), or null. */
	error: string | null;
}

const time = (iso: string | null | undefined): number | null => {
	if (!iso) return null;
	const ms = Date.parse(iso);
	return Number.isNaN(ms) ? null : ms;
};

/** Fields read from the live shell (the pending request's age, the last error). */
function fromShell(shell: ThreadShell | undefined) {
	return {
		pending_since: time(shell?.pendingRuntimeRequest?.createdAt),
		error:
			shell?.status === "failed" && typeof shell.lastError === "string"
				? redact(shell.lastError, 300)
				: null,
	};
}

/** A `t3_threads` row as the console lists it. */
export function rowOfListed(services: Services, row: ListedThread): ConsoleRow {
	const shell = services.fleet.get(row.machine)?.machine.thread(row.thread_id);
	return {
		thread_id: row.thread_id,
		machine: row.machine,
		project: maskSecrets(row.project.title),
		title: maskSecrets(row.title),
		status: row.status,
		state: row.state,
		pending: row.pending,
		updated_at: time(row.updated_at),
		client: row.client,
		...fromShell(shell),
	};
}

/**
 * The row of a thread as the client's scoped services see it now, or undefined when the thread
 * is outside its reach (or gone).
 */
export function rowOfThread(
	scoped: Services,
	threadId: string,
	machine?: string,
): ConsoleRow | undefined {
	const located =
		machine === undefined
			? scoped.fleet.locate(threadId)
			: locateOn(scoped, threadId, machine);
	if (!located || located.thread.deletedAt || located.thread.archivedAt)
		return undefined;
	const { thread, project, entry } = located;
	const record = scoped.threadDeps.threads.get(threadId);
	return {
		thread_id: thread.id,
		machine: entry.config.name,
		project: maskSecrets(project.title),
		title: maskSecrets(thread.title),
		status: thread.status,
		state: threadState(thread),
		pending: pendingOf(thread),
		updated_at: time(thread.updatedAt),
		client: record?.client ?? null,
		...fromShell(thread),
	};
}

/** The thread on one machine, within the scoped fleet's reach (a live change names its machine). */
function locateOn(scoped: Services, threadId: string, machine: string) {
	const entry = scoped.fleet.get(machine);
	const thread = entry?.machine.thread(threadId);
	const project =
		entry && thread ? scoped.fleet.project(entry, thread.projectId) : undefined;
	return entry && thread && project ? { entry, thread, project } : undefined;
}
