/**
 * What a plain `t3_threads` call (every machine, every project, active threads) reads on each
 * machine before its page: which machines are online, each one's listing and allowed projects.
 * Kept per fleet (a client's view of it) until anything changes on any machine: with 500
 * machines, reading those afresh was half of a call's own time, while a quiet fleet answers
 * the same plan every time. Any shell, state or configuration event of any machine, and any
 * project list replaced, counts as a change; a busy fleet makes a new plan per call, as before.
 */
import type { Fleet, FleetMachine } from "../../fleet/fleet.ts";
import { projectListVersion } from "../../t3/follow/shell-mirror.ts";
import type { Machine } from "../../t3/machine-api.ts";
import type { ProjectShell } from "../../t3/model.ts";
import type { Unavailable } from "./message-search.ts";
import type { Listing } from "./thread-index.ts";

export interface PlannedMachine {
	entry: FleetMachine;
	list: Listing;
	projects: Map<string, ProjectShell>;
	/** Some thread waits on a client tool call: read and applied again at every call. */
	waiting: boolean;
}

export interface ListPlan {
	online: FleetMachine[];
	unavailable: Unavailable[];
	machines: PlannedMachine[];
}

/** Shell, state and configuration events seen on the machines watched, all together. */
let machineEvents = 0;
const watched = new WeakSet<Machine>();
/**
 * Machine lists whose machines are all watched, each with a number: a call on one looks at none
 * of them again, and a reload (a new list) makes a new version.
 */
const watchedLists = new WeakMap<FleetMachine[], number>();
let lists = 0;

/** Where things stand now: a plan made at another version may be out of date. */
export function planVersion(fleet: Fleet): string {
	const list = fleet.list();
	let id = watchedLists.get(list);
	if (id === undefined) {
		for (const { machine } of list)
			if (!watched.has(machine)) {
				watched.add(machine);
				machine.onChange(() => {
					machineEvents += 1;
				});
			}
		id = ++lists;
		watchedLists.set(list, id);
	}
	return `${machineEvents}:${projectListVersion()}:${id}`;
}

const plans = new WeakMap<Fleet, { version: string; plan: ListPlan }>();

/** The plan kept for this fleet, if nothing changed since the version it was made at. */
export function keptPlan(fleet: Fleet, version: string): ListPlan | undefined {
	const kept = plans.get(fleet);
	return kept?.version === version ? kept.plan : undefined;
}

/**
 * Keeps a plan made from what stood at `version` (read before it was made: a change while it
 * was being made leaves it out of date at once).
 */
export function keepPlan(fleet: Fleet, version: string, plan: ListPlan): void {
	plans.set(fleet, { version, plan });
}
