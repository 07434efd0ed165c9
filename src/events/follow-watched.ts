/**
 * Which watched threads to follow on their own stream (src/t3/follow/thread-follow.ts): a watched
 * thread while a run is going or a request is pending, from the moment the shell or one of our
 * dispatches shows work starting until it settles. The tracker itself does not change: it reads
 * the followed state through the machine, which answers from memory while a thread is followed.
 */
import type { Fleet } from "../fleet/fleet.ts";
import type { ThreadStore } from "../store/threads.ts";
import { BUSY_RUN_STATUSES, type ThreadShell } from "../t3/model.ts";

/** A dispatch holds its lease this long at most before the shell or the stream shows the run. */
const START_GRACE_MS = 30_000;

function busy(shell: ThreadShell | undefined): boolean {
	return (
		shell !== undefined &&
		(shell.activeRunId !== null ||
			shell.pendingRuntimeRequest !== null ||
			BUSY_RUN_STATUSES.has(shell.status))
	);
}

/** Starts following; returns the stop function (releases every lease). */
export function followWatched(deps: {
	fleet: Fleet;
	threads: ThreadStore;
	now: () => number;
}): () => void {
	return deps.fleet.forEachMachine((entry) => {
		const stops: (() => void)[] = [];
		const machine = entry.machine;
		const follow = machine.follow?.bind(machine);
		if (!follow) return undefined;
		const name = entry.config.name;
		const leases = new Map<string, () => void>();
		/** Dispatched, not yet seen running: the run id the thread showed before, and until when. */
		const starting = new Map<
			string,
			{ before: string | null; until: number }
		>();

		const release = (threadId: string) => {
			leases.get(threadId)?.();
			leases.delete(threadId);
			starting.delete(threadId);
		};

		const consider = (threadId: string) => {
			const shell = machine.thread(threadId);
			let want = busy(shell);
			// An idle thread with nothing held, or a busy one already held: nothing to start or stop
			// whatever its record says. Spares a record read per thread of every snapshot and
			// catch-up (10 000 at start), and per change of a running thread (~1 000/s under load).
			// A thread unwatched mid-run is released when it settles.
			if (want === leases.has(threadId) && !starting.has(threadId)) return;
			const record = deps.threads.get(threadId);
			if (record?.watched !== 1 || record.machine !== name) {
				release(threadId);
				return;
			}
			const start = starting.get(threadId);
			if (start) {
				if (
					want ||
					(shell && shell.latestRunId !== start.before) ||
					deps.now() > start.until
				)
					starting.delete(threadId);
				else want = true;
			}
			if (want && !leases.has(threadId)) leases.set(threadId, follow(threadId));
			else if (!want && leases.has(threadId)) release(threadId);
		};

		/**
		 * After a (re)connect: every thread `consider` could act on. For an idle thread with no
		 * lease it does nothing whatever its record says, so only busy threads, held ones and
		 * dispatches on their way are looked at: reading every watched record of the machine
		 * instead was 200 rows per machine, 100 000 for a fleet, at each start.
		 */
		const reconsider = () => {
			const ids = new Set([...leases.keys(), ...starting.keys()]);
			for (const shell of machine.threads()) if (busy(shell)) ids.add(shell.id);
			for (const threadId of ids) consider(threadId);
		};

		stops.push(
			machine.onChange((change) => {
				if (change.kind === "thread") consider(change.thread.id);
				else if (change.kind === "thread.removed") release(change.threadId);
				else if (change.kind === "synchronized") reconsider();
			}),
		);
		if (machine.onWorkSent)
			stops.push(
				machine.onWorkSent((threadId) => {
					starting.set(threadId, {
						before: machine.thread(threadId)?.latestRunId ?? null,
						until: deps.now() + START_GRACE_MS,
					});
					consider(threadId);
				}),
			);
		if (machine.status().state === "online") reconsider();
		stops.push(() => {
			for (const threadId of [...leases.keys()]) release(threadId);
		});
		return () => {
			for (const stop of stops.splice(0)) stop();
		};
	});
}
