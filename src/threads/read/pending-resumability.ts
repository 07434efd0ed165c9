/**
 * Whether a thread's pending client tool call can still be answered, for `t3_threads`. The
 * shell's `pendingRuntimeRequest` says only id and kind: a `dynamic_tool_call` is answered by a
 * T3 client (the thread stays `active`), unless T3 marks it `not_resumable` (nobody can answer
 * it: `attention`, as CONTRACT.md says). Only the projection's request row says which, so it is
 * read once per request (a followed view that holds the row answers without a GET) and kept:
 * `not_resumable` for good (it never becomes answerable again), a resumable answer until the
 * thread's shell changes (a server restart can make it not resumable).
 */
import type { Machine } from "../../t3/machine-api.ts";
import type { ThreadShell } from "../../t3/model.ts";
import { perMachineMemo } from "./per-machine-memo.ts";
import { clearDerived, inState, type Listing } from "./thread-index.ts";
import { type ThreadState, threadState } from "./thread-state.ts";

interface Known {
	notResumable: boolean;
	/** The shell's `updatedAt` a resumable answer was read for. */
	at: string;
}

/** Requests whose capability was read. */
const known = perMachineMemo<Known>();

/** The pending client tool call's id, when that is what the thread waits on. */
function pendingToolCall(thread: ThreadShell): string | null {
	const pending = thread.pendingRuntimeRequest;
	return pending?.kind === "dynamic_tool_call" ? pending.id : null;
}

/** What is known of the thread's pending client tool call: true/false, or undefined (unread). */
function knownNotResumable(
	machine: Machine,
	thread: ThreadShell,
): boolean | undefined {
	const id = pendingToolCall(thread);
	if (id === null) return false;
	const kept = known.get(machine, id);
	if (!kept) return undefined;
	if (kept.notResumable) return true;
	return kept.at === (thread.updatedAt ?? "") ? false : undefined;
}

/** The thread's `t3_threads` state, counting a known not-resumable client tool call. */
export function listedState(
	machine: Machine,
	thread: ThreadShell,
): ThreadState {
	return knownNotResumable(machine, thread) === true
		? "attention"
		: threadState(thread);
}

/**
 * Indexes of the listing's active threads waiting on a client tool call, kept with the listing:
 * every listing asks every machine, and nearly always there are none.
 */
function toolCallWaiters(list: Listing): number[] {
	if (list.toolCallWaiters) return list.toolCallWaiters;
	const out: number[] = [];
	const active = inState(list, "active");
	for (let k = 0; k < active.length; k += 1) {
		const i = active[k] as number;
		if (pendingToolCall(list.threads[i] as ThreadShell) !== null) out.push(i);
	}
	list.toolCallWaiters = out;
	return out;
}

/** Whether any active thread of the listing waits on a client tool call (nearly never). */
export const hasToolCallWaiters = (list: Listing): boolean =>
	toolCallWaiters(list).length > 0;

/**
 * Reads the capability of every listable pending client tool call not known yet (one read
 * per request, in parallel); a read that fails leaves it unknown (listed as `active`, as before).
 */
export function learnPendingToolCalls(
	machine: Machine,
	list: Listing,
	listable: (thread: ThreadShell) => boolean,
): Promise<unknown> | undefined {
	const waiters = toolCallWaiters(list);
	if (waiters.length === 0) return undefined;
	const unknown = waiters
		.map((i) => list.threads[i] as ThreadShell)
		.filter(
			(t) =>
				!t.deletedAt &&
				listable(t) &&
				knownNotResumable(machine, t) === undefined,
		);
	// Nothing to read (nearly always): no promise per machine of a large fleet.
	if (unknown.length === 0) return undefined;
	return Promise.all(
		unknown.map(async (thread) => {
			const id = pendingToolCall(thread) as string;
			const hasRow = (p: { runtimeRequests: { id: string }[] }) =>
				p.runtimeRequests.some((r) => r.id === id);
			try {
				const { projection } = await machine.getThread(thread.id, {
					covers: hasRow,
				});
				const row = projection.runtimeRequests.find((r) => r.id === id);
				if (!row) return;
				const capability = row.responseCapability as
					| { type?: unknown }
					| undefined;
				known.set(machine, id, {
					notResumable: capability?.type === "not_resumable",
					at: thread.updatedAt ?? "",
				});
			} catch {
				// Unknown: asked again on the next listing.
			}
		}),
	);
}

/**
 * Moves the listing's threads whose pending client tool call is known not resumable to
 * `attention`, so the `state` filter and the rows agree. Synchronous: applied to the listing a
 * page is then read from. (A thread's next shell change recomputes its state; the next listing
 * applies this again.)
 */
export function applyKnownToolCalls(machine: Machine, list: Listing): void {
	const waiters = toolCallWaiters(list);
	if (waiters.length === 0) return;
	let moved = false;
	for (const i of waiters) {
		if (knownNotResumable(machine, list.threads[i] as ThreadShell) !== true)
			continue;
		list.states[i] = "attention";
		moved = true;
	}
	if (moved) clearDerived(list);
}
