/**
 * Each machine's busy threads and its `max_active_runs` (CONTRACT.md "One pool", counted as in
 * "Trust round three": threads with a run preparing, starting, running, waiting or queued, one
 * per thread, in every project, whoever started them). Kept per machine from its shell changes
 * (a full pass only at a snapshot), so a placement over 500 machines reads a set, not 100 000
 * shells; the cap itself is a run-slots.ts cap, so a burst takes its slots before anything is
 * sent. Also kept: threads whose last run failed on a usage limit with the reset still ahead.
 */
import type { FleetMachine } from "../fleet/fleet.ts";
import { RightsError } from "../rights/refusal.ts";
import {
	type CountedThread,
	isBusyShell,
	type RunCap,
	type RunSlots,
} from "../rights/run-slots.ts";
import type { Machine } from "../t3/machine-api.ts";
import type { ThreadShell } from "../t3/model.ts";

interface Tracker {
	busy: Set<string>;
	/** Threads whose last run failed on a usage limit: the provider and the reset (epoch ms). */
	limited: Map<string, { instanceId: string | null; resetAt: number }>;
}

const trackers = new WeakMap<Machine, Tracker>();

let version = 0;
/** Changes whenever any machine's busy threads change (what a kept answer compares). */
export const busyVersion = (): number => version;

function note(tracker: Tracker, thread: ThreadShell): void {
	const was = tracker.busy.has(thread.id);
	if (isBusyShell(thread)) tracker.busy.add(thread.id);
	else tracker.busy.delete(thread.id);
	if (was !== tracker.busy.has(thread.id)) version += 1;
	const resetAt =
		thread.lastErrorClass === "usage_limit" && thread.usageLimitResetAt
			? Date.parse(thread.usageLimitResetAt)
			: Number.NaN;
	if (Number.isFinite(resetAt))
		tracker.limited.set(thread.id, {
			instanceId:
				thread.modelSelection?.instanceId ?? thread.providerInstanceId ?? null,
			resetAt,
		});
	else tracker.limited.delete(thread.id);
}

function rescan(tracker: Tracker, machine: Machine): void {
	version += 1;
	tracker.busy.clear();
	tracker.limited.clear();
	for (const thread of machine.threads()) note(tracker, thread);
}

/** The machine's tracker, made (one full pass, then its shell changes) on first use. */
function trackerOf(machine: Machine): Tracker {
	let tracker = trackers.get(machine);
	if (!tracker) {
		const made: Tracker = { busy: new Set(), limited: new Map() };
		tracker = made;
		trackers.set(machine, made);
		rescan(made, machine);
		machine.onChange((change) => {
			if (change.kind === "thread") note(made, change.thread);
			else if (change.kind === "thread.removed") {
				if (made.busy.delete(change.threadId)) version += 1;
				made.limited.delete(change.threadId);
			} else if (change.kind === "snapshot") rescan(made, machine);
		});
	}
	return tracker;
}

/** The threads a machine's cap counts: the ones its shell shows busy (run-slots checks each). */
export function machineThreads(entry: FleetMachine): () => CountedThread[] {
	const name = entry.config.name;
	return () =>
		[...trackerOf(entry.machine).busy].map((threadId) => ({
			threadId,
			machine: name,
		}));
}

/**
 * The machine's `max_active_runs` as a run-slots cap (unlimited without one: its slots still
 * count, so a burst placed at once spreads over the machines by their busy threads).
 */
export function machineCap(entry: FleetMachine): RunCap {
	const cap = entry.config.maxActiveRuns ?? Number.POSITIVE_INFINITY;
	const name = entry.config.name;
	return {
		key: `machine:${name}`,
		cap,
		threads: machineThreads(entry),
		busy: () => trackerOf(entry.machine).busy,
		refuse: (holding) =>
			new RightsError(
				"max_active_runs_reached",
				`machine "${name}" may have ${cap} run${cap === 1 ? "" : "s"} going or queued at once (max_active_runs), and ${holding.length === 0 ? "none may start" : `threads ${holding.join(", ")} hold ${holding.length === 1 ? "it" : "them"}`} (whoever started them). Wait for one to finish (t3_wait), or pass machine as a pattern ("*") to place the thread on a machine with room.`,
			),
	};
}

/** Busy threads on the machine now, reservations not yet shown included (`active_runs`). */
export function activeRuns(ledger: RunSlots, entry: FleetMachine): number {
	return ledger.count({
		key: `machine:${entry.config.name}`,
		threads: machineThreads(entry),
		busy: () => trackerOf(entry.machine).busy,
	});
}

/**
 * A run on the machine that failed on a usage limit of `instanceId` (any provider when the
 * thread's is unknown) whose reset is still ahead; the latest reset of those, or undefined.
 */
export function limitedUntil(
	machine: Machine,
	instanceId: string,
	now: number,
): number | undefined {
	let latest: number | undefined;
	for (const l of trackerOf(machine).limited.values())
		if (
			l.resetAt > now &&
			(l.instanceId === null || l.instanceId === instanceId) &&
			(latest === undefined || l.resetAt > latest)
		)
			latest = l.resetAt;
	return latest;
}
