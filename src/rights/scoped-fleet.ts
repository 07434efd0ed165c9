/**
 * A client's reach as a Fleet (CONTRACT.md "Clients and rights"): machines outside its
 * `machines` and projects outside its `projects` do not exist for it, by the same mechanism as a
 * machine's own allowlist, so every lookup, listing, wait and stored record that goes through
 * the fleet hides them alike. A client that reaches everything gets the fleet itself.
 */
import {
	compilePathMatcher,
	compileProjectMatcher,
	fnmatchToRegExp,
} from "../config/fnmatch.ts";
import type { ClientConfig } from "../config/types.ts";
import {
	allowedProjects,
	type Fleet,
	type FleetMachine,
	locateIn,
	recordAllowed,
} from "../fleet/fleet.ts";

import type { ProjectShell } from "../t3/model.ts";

const everything = (patterns: string[]) => patterns.includes("*");

/** Whether the client is narrowed at all. */
export function reachesEverything(client: ClientConfig): boolean {
	return everything(client.machines) && everything(client.projects);
}

/** Whether a machine name is within the client's `machines`. */
export function machineInReach(client: ClientConfig, name: string): boolean {
	return client.machines.some((p) => fnmatchToRegExp(p).test(name));
}

export function scopeFleet(fleet: Fleet, client: ClientConfig): Fleet {
	if (reachesEverything(client)) return fleet;
	const project = compileProjectMatcher(client.projects);
	const path = compilePathMatcher(client.projects);
	const entries: FleetMachine[] = fleet
		.list()
		.filter((e) => machineInReach(client, e.config.name))
		.map((base) => {
			const judged = new WeakMap<object, boolean>();
			return {
				config: base.config,
				machine: base.machine,
				allows(p) {
					let allowed = judged.get(p);
					if (allowed === undefined) {
						allowed = base.allows(p) && project(p);
						judged.set(p, allowed);
					}
					return allowed;
				},
				allowsPath: (p) => base.allowsPath(p) && path(p),
			};
		});
	const byName = new Map(entries.map((e) => [e.config.name, e]));
	const allowedOf = new WeakMap<ProjectShell[], ProjectShell[]>();
	/** The client's own entry for any entry handed back to it. */
	const own = (entry: FleetMachine) => byName.get(entry.config.name);
	const projectOf = (entry: FleetMachine, projectId: string) => {
		const mine = own(entry);
		const found = mine?.machine.projects().find((p) => p.id === projectId);
		return found && mine?.allows(found) ? found : undefined;
	};
	return {
		list: () => entries,
		get: (name) => byName.get(name),
		names: () => entries.map((e) => e.config.name),
		projects: (entry) => {
			const mine = own(entry);
			return mine ? allowedProjects(mine, allowedOf) : [];
		},
		project: projectOf,
		allowsRecord(record) {
			const mine = byName.get(record.machine);
			return mine !== undefined && recordAllowed(mine, record);
		},
		locate: (threadId) => locateIn(entries, projectOf, threadId),
		forEachMachine: (attach) =>
			fleet.forEachMachine((base) => {
				const mine = byName.get(base.config.name);
				return mine ? attach(mine) : undefined;
			}),
		// Starting and stopping the machines belongs to the whole fleet, not to a client's view.
		start: () => undefined,
		stop: async () => undefined,
	};
}
