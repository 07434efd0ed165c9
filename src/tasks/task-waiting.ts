/**
 * Open tasks waiting on their threads: one follow lease per waited-on thread, the machines' shell
 * changes (one listener each), one look in flight per thread and one retry timer for the whole
 * process. A look is `t3_wait`'s (threads/wait.ts); a settled thread completes every task waiting
 * on it. After a restart `start` looks again once each machine has caught up.
 */
import type { Fleet, FleetMachine } from "../fleet/fleet.ts";
import type { ThreadDeps } from "../threads/deps.ts";
import { ThreadError } from "../threads/errors.ts";
import type { LocatedThread } from "../threads/locate.ts";
import { heldSettled } from "../threads/wait/held-wait.ts";
import { isNotFound, isOwnDelete } from "../threads/wait/vanish.ts";
import {
	evaluate,
	locateOrGone,
	missingResult,
	removedResult,
	type Settled,
} from "../threads/wait/wait.ts";
import { elapsedS, type TaskRec } from "./task-record.ts";
import { settledEnd, type WaitEnd } from "./task-result.ts";

/** After a failed read, how soon the threads it concerned are looked at again. */
const RETRY_MS = 2_000;

export interface TaskWaitingOptions {
	deps: ThreadDeps;
	fleet: Fleet;
	/** The tasks held now, by id (read only here). */
	tasks: Map<string, TaskRec>;
	/** Ends an open task with how its wait ended. */
	complete(rec: TaskRec, end: WaitEnd): void;
	/** Tells the task's listeners of a change. */
	notify(rec: TaskRec): void;
}

export interface TaskWaiting {
	/** The task waits on its threads from now on. */
	watch(rec: TaskRec): void;
	/** The task no longer waits (ended or dropped); a thread no task waits on is released. */
	unwatch(rec: TaskRec): void;
	/** Looks at a waited-on thread (again, once a look in flight is done). */
	check(threadId: string): void;
	/** Listens to every machine and looks at every waited-on thread. */
	start(): void;
	stop(): void;
}

export function createTaskWaiting(options: TaskWaitingOptions): TaskWaiting {
	const { deps, fleet, tasks, complete, notify } = options;
	/** Open tasks by waited-on thread, with the thread's follow lease. */
	const byThread = new Map<
		string,
		{ tasks: Set<string>; release?: () => void }
	>();
	const inFlight = new Map<string, { again: boolean }>();
	const retrying = new Set<string>();
	let retryTimer: ReturnType<typeof setTimeout> | undefined;
	const unsubscribes: (() => void)[] = [];
	let stopped = false;

	function watch(rec: TaskRec): void {
		for (const place of rec.places) {
			let entry = byThread.get(place.thread_id);
			if (!entry) {
				entry = { tasks: new Set() };
				byThread.set(place.thread_id, entry);
				// Following the thread's own stream is what makes a completion arrive with its frame.
				entry.release = fleet
					.get(place.machine)
					?.machine.follow?.(place.thread_id);
			}
			entry.tasks.add(rec.row.task_id);
		}
	}

	function unwatch(rec: TaskRec): void {
		for (const place of rec.places) {
			const entry = byThread.get(place.thread_id);
			if (!entry) continue;
			entry.tasks.delete(rec.row.task_id);
			if (entry.tasks.size === 0) {
				byThread.delete(place.thread_id);
				entry.release?.();
				retrying.delete(place.thread_id);
			}
		}
	}

	/** One look at a thread: how its run settled, or null while it has not (or cannot be read). */
	async function lookOnce(
		threadId: string,
	): Promise<
		{ settled: Settled; machine?: string } | { error: string } | null
	> {
		const held = heldSettled(deps, threadId);
		if (held === "pending") return null;
		if (held) return { settled: held };
		let located: LocatedThread;
		try {
			const found = await locateOrGone(deps, threadId);
			if ("outcome" in found) return { settled: found };
			located = found;
		} catch (error) {
			// Not on any machine reachable now: a machine's catch-up or a later change looks again.
			if (!(error instanceof ThreadError)) scheduleRetry(threadId, error);
			return null;
		}
		try {
			const settled = await evaluate(deps, located);
			return settled ? { settled } : null;
		} catch (error) {
			if (isNotFound(error)) {
				if (isOwnDelete(threadId))
					return {
						error: `Thread "${threadId}" was deleted with t3_delete while waiting on it.`,
					};
				return {
					settled: missingResult(threadId, located.entry.config.name),
				};
			}
			scheduleRetry(threadId, error);
			return null;
		}
	}

	function check(threadId: string): void {
		if (stopped || !byThread.has(threadId)) return;
		const state = inFlight.get(threadId);
		if (state) {
			state.again = true;
			return;
		}
		const mine = { again: false };
		inFlight.set(threadId, mine);
		void (async () => {
			try {
				do {
					mine.again = false;
					const seen = await lookOnce(threadId);
					if (seen) settleThread(threadId, seen);
				} while (mine.again && byThread.has(threadId) && !stopped);
			} catch (error) {
				deps.log.warn("task: look failed", { threadId, error });
			} finally {
				inFlight.delete(threadId);
			}
		})();
	}

	function settleThread(
		threadId: string,
		seen: { settled: Settled } | { error: string },
	): void {
		const entry = byThread.get(threadId);
		if (!entry) return;
		for (const taskId of [...entry.tasks]) {
			const rec = tasks.get(taskId);
			if (!rec) continue;
			if ("error" in seen) complete(rec, seen);
			else complete(rec, settledEnd(seen.settled, elapsedS(rec, deps.now())));
		}
	}

	function scheduleRetry(threadId: string, error: unknown): void {
		deps.log.debug("task: evaluation failed", { threadId, error });
		retrying.add(threadId);
		if (retryTimer !== undefined || stopped) return;
		retryTimer = setTimeout(() => {
			retryTimer = undefined;
			const again = [...retrying];
			retrying.clear();
			for (const id of again) check(id);
		}, RETRY_MS);
	}

	/** The threads that working tasks wait on, on that machine. */
	function threadsOn(machine: string): Set<string> {
		const found = new Set<string>();
		for (const rec of tasks.values()) {
			if (rec.row.status !== "working") continue;
			for (const place of rec.places)
				if (place.machine === machine) found.add(place.thread_id);
		}
		return found;
	}

	function onChange(entry: FleetMachine) {
		return (
			change: Parameters<Parameters<FleetMachine["machine"]["onChange"]>[0]>[0],
		) => {
			if (change.kind === "thread") {
				const id = change.thread.id;
				if (!byThread.has(id)) return;
				reportRunStatus(id, change.thread.status);
				check(id);
			} else if (change.kind === "thread.removed") {
				if (byThread.has(change.threadId)) check(change.threadId);
			} else if (change.kind === "removed") {
				// Its machine left the config: every task waiting there ends failed now.
				const name = entry.config.name;
				for (const threadId of threadsOn(name))
					settleThread(threadId, { settled: removedResult(threadId, name) });
			} else if (change.kind === "snapshot" || change.kind === "synchronized") {
				for (const threadId of threadsOn(entry.config.name)) check(threadId);
			}
		};
	}

	/** A listener hears when the run's status changes, not only when the task ends. */
	function reportRunStatus(threadId: string, status: string): void {
		const entry = byThread.get(threadId);
		if (!entry) return;
		for (const taskId of entry.tasks) {
			const rec = tasks.get(taskId);
			if (!rec || rec.places[0]?.thread_id !== threadId) continue;
			if (rec.lastRunStatus === status) continue;
			rec.lastRunStatus = status;
			notify(rec);
		}
	}

	return {
		watch,
		unwatch,
		check,
		start() {
			unsubscribes.push(
				fleet.forEachMachine((entry) =>
					entry.machine.onChange(onChange(entry)),
				),
			);
			// A held dispatch that starts is followed on its machine from then on; one that ends
			// otherwise settles its tasks.
			const offEnd = deps.holding?.onEnd((threadId) => {
				const entry = byThread.get(threadId);
				if (!entry) return;
				const machine = deps.holding?.get(threadId)?.placed_machine;
				if (machine)
					entry.release ??= fleet.get(machine)?.machine.follow?.(threadId);
				check(threadId);
			});
			if (offEnd) unsubscribes.push(offEnd);
			// Threads on machines already in sync are looked at now; the others on their catch-up.
			for (const id of byThread.keys()) check(id);
		},
		stop() {
			stopped = true;
			for (const unsubscribe of unsubscribes) unsubscribe();
			if (retryTimer !== undefined) clearTimeout(retryTimer);
			for (const entry of byThread.values()) entry.release?.();
			byThread.clear();
		},
	};
}
