/**
 * The configured T3 machines and their project allowlists. Everything outside the allowlist
 * does not exist for the connector: lookups here are the one place that rule is applied.
 */

import {
	compilePathMatcher,
	compileProjectMatcher,
} from "../config/fnmatch.ts";
import type { MachineConfig } from "../config/types.ts";
import type { Machine } from "../t3/machine-api.ts";
import type { ProjectShell, ThreadShell } from "../t3/model.ts";

export interface FleetMachine {
	config: MachineConfig;
	machine: Machine;
	/** Whether the project passes this machine's `projects` patterns. */
	allows(project: { title: string; workspaceRoot: string }): boolean;
	/** Whether a workspace path alone passes the patterns (a new project's path). */
	allowsPath(path: string): boolean;
}

export interface ThreadLocation {
	entry: FleetMachine;
	thread: ThreadShell;
	project: ProjectShell;
}

export interface Fleet {
	list(): FleetMachine[];
	get(name: string): FleetMachine | undefined;
	names(): string[];
	/** Allowlisted projects of a machine, from its shell. */
	projects(entry: FleetMachine): ProjectShell[];
	/** Allowlisted project by id on a machine. */
	project(entry: FleetMachine, projectId: string): ProjectShell | undefined;
	/**
	 * Whether a stored thread record's project is allowed now: judged on the machine's live
	 * project when its shell lists it, else on the title and path stored with the record (an
	 * offline machine); a record with neither, or of a machine no longer configured, is hidden.
	 */
	allowsRecord(record: {
		machine: string;
		project_id: string;
		project_title: string | null;
		project_path: string | null;
	}): boolean;
	/** Finds an active thread of an allowlisted project on any machine's shell. */
	locate(threadId: string): ThreadLocation | undefined;
	start(): void;
	stop(): Promise<void>;
}

/**
 * Machines connecting at once at start. Each connect is a few HTTP reads, a socket and a
 * shell snapshot; unbounded, 500 of them land together (and 500 unreachable ones would hold
 * 500 sockets and timers at once). A slot is freed as soon as its machine is online or its
 * first attempt failed, or after `START_SLOT_MS` for one that hangs (it keeps trying alone).
 */
const START_CONCURRENCY = 32;
const START_SLOT_MS = 5_000;

type StoredPlace = Parameters<Fleet["allowsRecord"]>[0];

/**
 * Whether a stored record's project passes an entry's rule: judged on the live project when
 * the machine's shell lists it, else on the title and path stored with the record.
 */
export function recordAllowed(
	entry: FleetMachine,
	record: StoredPlace,
): boolean {
	const live = entry.machine.projects().find((p) => p.id === record.project_id);
	if (live) return entry.allows(live);
	if (record.project_title === null || record.project_path === null)
		return false;
	return entry.allows({
		title: record.project_title,
		workspaceRoot: record.project_path,
	});
}

/** The first entry whose shell has the thread in an allowed project. */
export function locateIn(
	entries: FleetMachine[],
	project: (entry: FleetMachine, projectId: string) => ProjectShell | undefined,
	threadId: string,
): ThreadLocation | undefined {
	for (const entry of entries) {
		const thread = entry.machine.thread(threadId);
		if (!thread) continue;
		const proj = project(entry, thread.projectId);
		if (proj) return { entry, thread, project: proj };
	}
	return undefined;
}

/**
 * The entry's allowed projects, filtered once per project list (a machine's shell keeps one
 * array until a project changes): the same list comes back as the same array, which is what
 * `t3_machines` and `t3_threads` compare to know nothing changed.
 */
export function allowedProjects(
	entry: FleetMachine,
	memo: WeakMap<ProjectShell[], ProjectShell[]>,
): ProjectShell[] {
	const all = entry.machine.projects();
	let allowed = memo.get(all);
	if (!allowed) {
		allowed = all.filter((p) => entry.allows(p));
		memo.set(all, allowed);
	}
	return allowed;
}

export function createFleet(
	machines: MachineConfig[],
	createMachine: (config: MachineConfig) => Machine,
): Fleet {
	const entries: FleetMachine[] = machines.map((config) => {
		const matcher = compileProjectMatcher(config.projects);
		// Judged once per project object (a shell replaces the object when the project changes):
		// a listing asks about every project of every machine on each call.
		const judged = new WeakMap<object, boolean>();
		const allows = (project: { title: string; workspaceRoot: string }) => {
			let allowed = judged.get(project);
			if (allowed === undefined) {
				allowed = matcher(project);
				judged.set(project, allowed);
			}
			return allowed;
		};
		return {
			config,
			machine: createMachine(config),
			allows,
			allowsPath: compilePathMatcher(config.projects),
		};
	});
	const byName = new Map(entries.map((e) => [e.config.name, e]));
	const allowedOf = new WeakMap<ProjectShell[], ProjectShell[]>();
	let starting = false;

	const project = (entry: FleetMachine, projectId: string) => {
		const found = entry.machine.projects().find((p) => p.id === projectId);
		return found && entry.allows(found) ? found : undefined;
	};

	return {
		list: () => entries,
		get: (name) => byName.get(name),
		names: () => entries.map((e) => e.config.name),
		projects: (entry) => allowedProjects(entry, allowedOf),
		project,
		allowsRecord(record) {
			const entry = byName.get(record.machine);
			return entry !== undefined && recordAllowed(entry, record);
		},
		locate: (threadId) => locateIn(entries, project, threadId),
		start() {
			starting = true;
			let next = 0;
			const startNext = (): void => {
				const entry = starting ? entries[next++] : undefined;
				if (!entry) return;
				entry.machine.start();
				void entry.machine.settled(START_SLOT_MS).then(startNext, startNext);
			};
			for (let i = 0; i < START_CONCURRENCY; i++) startNext();
		},
		async stop() {
			starting = false;
			await Promise.all(entries.map((e) => e.machine.stop()));
		},
	};
}
