/**
 * Turns watched threads' shell changes into events: a run reaching a terminal status and a new
 * pending runtime request each become exactly one outbox row. The thread's observed state and
 * the rows are written in one transaction. After a reconnect or a restart the persisted state
 * is compared with the fresh shell, so what happened meanwhile still produces its events; when
 * the shell coalesced a run away (the next one started before it was seen terminal), the
 * thread's projection tells that run's outcome. Threads of projects not allowed now are not
 * evaluated at all (the thread store does not return them): their changes wait, unrecorded,
 * until they are allowed again. This is the tracker itself: which thread to evaluate when, one
 * evaluation at a time per thread (thread-evaluation.ts), retried after a failure.
 */

import type { Fleet } from "../fleet/fleet.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { Db } from "../store/db.ts";
import type { DispatchStore } from "../store/dispatches.ts";
import { createGroupCommit, type GroupCommit } from "../store/group-commit.ts";
import type { Outbox } from "../store/outbox.ts";
import type { ThreadStore } from "../store/threads.ts";
import type { Logger } from "../util/log.ts";
import { activityKey, nothingToDo } from "./shell-activity.ts";
import { evaluateThread } from "./thread-evaluation.ts";
import { markUnwatchedVanished } from "./unwatched-vanish.ts";

export interface TrackerDeps {
	fleet: Fleet;
	db: Db;
	threads: ThreadStore;
	dispatches: DispatchStore;
	outbox: Outbox;
	metrics: Metrics;
	log: Logger;
	now: () => number;
	/** Called after new rows were committed (wakes the delivery worker). */
	onEmitted: () => void;
	/** Where outbox rows are committed (default: a batch of its own per turn on `db`). */
	commits?: GroupCommit;
}

/** A failed evaluation is tried again after this long. */
const RETRY_MS = 5_000;

export interface Tracker {
	start(): void;
	stop(): void;
	/** Re-evaluates one thread now (after t3_watch or a dispatch). */
	check(threadId: string): void;
	/** Resolves when no evaluation is running (tests, shutdown). */
	idle(): Promise<void>;
}

export function createTracker(deps: TrackerDeps): Tracker {
	const commits = deps.commits ?? createGroupCommit(deps.db);
	const unsubscribes: (() => void)[] = [];
	const running = new Map<string, { again: boolean; done: Promise<void> }>();
	/** Per watched thread, the activity (run, status, request) of the last change checked. */
	const checkedAt = new Map<string, string>();
	const retries = new Map<string, ReturnType<typeof setTimeout>>();
	let stopped = false;

	const retryLater = (threadId: string) => {
		if (stopped || retries.has(threadId)) return;
		const timer = setTimeout(() => {
			retries.delete(threadId);
			check(threadId);
		}, RETRY_MS);
		retries.set(threadId, timer);
	};

	const check = (threadId: string) => {
		const state = running.get(threadId);
		if (state) {
			state.again = true;
			return;
		}
		const mine = { again: false, done: Promise.resolve() };
		mine.done = (async () => {
			do {
				mine.again = false;
				try {
					await evaluateThread(deps, commits, threadId);
				} catch (error) {
					// The persisted state is untouched; look again later (a full disk, a machine
					// that dropped mid-read) even if no new shell change comes to trigger it.
					deps.log.warn("event evaluation failed; retrying", {
						threadId,
						error,
					});
					retryLater(threadId);
				}
			} while (mine.again);
			running.delete(threadId);
		})();
		running.set(threadId, mine);
	};

	const sweeps = new Set<Promise<void>>();
	const checkMachine = (name: string) => {
		const entry = deps.fleet.get(name);
		const machine = entry?.machine;
		const online = machine?.status().state === "online";
		if (entry && online) {
			const sweep = markUnwatchedVanished(deps, entry).then(
				() => {},
				(error) =>
					deps.log.warn("checking unwatched threads failed", {
						machine: name,
						error,
					}),
			);
			sweeps.add(sweep);
			void sweep.finally(() => sweeps.delete(sweep));
		}
		for (const record of deps.threads.watchedStatesOn(name)) {
			const id = record.thread_id;
			// Thousands of threads as they were: what their evaluation would decide first, from
			// the rows at hand instead of a record read and a promise per thread.
			const shell = online ? machine?.thread(id) : undefined;
			if (shell && !running.has(id) && nothingToDo(record, shell)) continue;
			check(id);
		}
	};

	return {
		start() {
			unsubscribes.push(
				deps.fleet.forEachMachine((entry) => {
					const name = entry.config.name;
					return entry.machine.onChange((change) => {
						// Not online (a snapshot being applied): an evaluation would stop at the state
						// check, and the catch-up at `synchronized` evaluates every watched thread.
						if (
							(change.kind === "thread" || change.kind === "thread.removed") &&
							entry.machine.status().state !== "online"
						)
							return;
						if (change.kind === "thread") {
							const id = change.thread.id;
							// Most changes only stream a message: what an evaluation decides on (run,
							// status, request) is what the last one saw, so it would find nothing.
							const key = activityKey(change.thread);
							if (checkedAt.get(id) === key) return;
							const record = deps.threads.get(id);
							if (record?.watched === 1 && record.machine === name) {
								checkedAt.set(id, key);
								check(id);
							}
						} else if (change.kind === "thread.removed") {
							checkedAt.delete(change.threadId);
							const record = deps.threads.get(change.threadId);
							if (record?.watched === 1 && record.machine === name)
								check(change.threadId);
						} else if (change.kind === "synchronized") {
							// Catch-up after (re)connect: compare persisted state with the fresh shell.
							checkedAt.clear();
							checkMachine(name);
						} else if (change.kind === "snapshot") checkedAt.clear();
					});
				}),
			);
			for (const entry of deps.fleet.list()) {
				if (entry.machine.status().state === "online")
					checkMachine(entry.config.name);
			}
		},
		stop() {
			stopped = true;
			for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
			for (const timer of retries.values()) clearTimeout(timer);
			retries.clear();
		},
		check,
		async idle() {
			while (running.size || sweeps.size)
				await Promise.all([
					...[...running.values()].map((r) => r.done),
					...sweeps,
				]);
		},
	};
}
