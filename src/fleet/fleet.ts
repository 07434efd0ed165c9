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
	/** The machines, in config order: the same array until the configured machines change. */
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
	/**
	 * Calls `attach` for every machine now and for every machine added later (a config
	 * reload); the cleanup it returns runs when that machine is removed, or for every machine
	 * when the returned function is called.
	 */
	forEachMachine(
		attach: (entry: FleetMachine) => (() => void) | undefined,
	): () => void;
	start(): void;
	stop(): Promise<void>;
}

/** What a config reload changed in the fleet (by machine name). */
export interface FleetChanges {
	added: string[];
	removed: string[];
	/** Its url or token changed: it connects anew. */
	reconnected: string[];
	/** Its `projects`, `model`, `options` or caps changed: applied in place. */
	updated: string[];
}

/** The fleet the services own: its machines can be changed while it runs (SIGHUP). */
export interface ManagedFleet extends Fleet {
	/**
	 * Makes the fleet's machines these: new ones connect, removed ones stop (their listeners get
	 * `{kind: "removed"}` first), a changed url or token reconnects, everything else applies in
	 * place. The other machines keep their sockets.
	 */
	reconcile(machines: MachineConfig[]): Promise<FleetChanges>;
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

/** The project rule of one machine config, judged once per project object. */
function projectRules(
	config: MachineConfig,
): Pick<FleetMachine, "allows" | "allowsPath"> {
	const matcher = compileProjectMatcher(config.projects);
	// Judged once per project object (a shell replaces the object when the project changes):
	// a listing asks about every project of every machine on each call.
	const judged = new WeakMap<object, boolean>();
	return {
		allows(project) {
			let allowed = judged.get(project);
			if (allowed === undefined) {
				allowed = matcher(project);
				judged.set(project, allowed);
			}
			return allowed;
		},
		allowsPath: compilePathMatcher(config.projects),
	};
}

/** Whether a machine must connect anew for this config (where and as whom it connects). */
const connectsElsewhere = (a: MachineConfig, b: MachineConfig) =>
	a.url !== b.url ||
	a.token !== b.token ||
	a.tokenEnv !== b.tokenEnv ||
	a.tokenFile !== b.tokenFile;

export function createFleet(
	machines: MachineConfig[],
	createMachine: (config: MachineConfig) => Machine,
): ManagedFleet {
	const entryOf = (config: MachineConfig): FleetMachine => ({
		config,
		machine: createMachine(config),
		...projectRules(config),
	});
	let entries: FleetMachine[] = machines.map(entryOf);
	let byName = new Map(entries.map((e) => [e.config.name, e]));
	let allowedOf = new WeakMap<ProjectShell[], ProjectShell[]>();
	let starting = false;
	let running = false;
	/** The entries every `forEachMachine` was attached to (added ones join at a reconcile). */
	const known = new Set(entries);
	/** Per attach call: the cleanup of each machine it was attached to. */
	const attached = new Set<{
		attach: (entry: FleetMachine) => (() => void) | undefined;
		cleanups: Map<FleetMachine, () => void>;
	}>();
	const attachAll = (entry: FleetMachine) => {
		for (const a of attached) {
			const cleanup = a.attach(entry);
			if (cleanup) a.cleanups.set(entry, cleanup);
		}
	};
	const detachAll = (entry: FleetMachine) => {
		for (const a of attached) {
			a.cleanups.get(entry)?.();
			a.cleanups.delete(entry);
		}
	};

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
		forEachMachine(attach) {
			const mine = { attach, cleanups: new Map<FleetMachine, () => void>() };
			attached.add(mine);
			for (const entry of entries) {
				const cleanup = attach(entry);
				if (cleanup) mine.cleanups.set(entry, cleanup);
			}
			return () => {
				attached.delete(mine);
				for (const cleanup of mine.cleanups.values()) cleanup();
				mine.cleanups.clear();
			};
		},
		start() {
			starting = true;
			running = true;
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
			running = false;
			await Promise.all(entries.map((e) => e.machine.stop()));
		},
		async reconcile(next) {
			const changes: FleetChanges = {
				added: [],
				removed: [],
				reconnected: [],
				updated: [],
			};
			const wanted = new Set(next.map((m) => m.name));
			const gone = entries.filter((e) => !wanted.has(e.config.name));
			const fresh: FleetMachine[] = [];
			const stopping: Promise<void>[] = [];
			const replaced: FleetMachine[] = [];
			for (const config of next) {
				const entry = byName.get(config.name);
				if (!entry) {
					const added = entryOf(config);
					fresh.push(added);
					changes.added.push(config.name);
					continue;
				}
				const before = entry.config;
				if (connectsElsewhere(before, config)) {
					// A new connection in place of the old: same entry, so waits and listeners stay.
					const reconnect = entry.machine.reconnect;
					if (reconnect) {
						entry.config = config;
						Object.assign(entry, projectRules(config));
						stopping.push(reconnect.call(entry.machine, config));
					} else {
						replaced.push(entry);
						const added = entryOf(config);
						fresh.push(added);
					}
					changes.reconnected.push(config.name);
				} else if (!Bun.deepEquals(before, config)) {
					entry.config = config;
					Object.assign(entry, projectRules(config));
					changes.updated.push(config.name);
				}
				fresh.push(entry);
			}
			const removedEntries = [...gone, ...replaced];
			for (const entry of gone) changes.removed.push(entry.config.name);
			const kept = fresh.filter((e) => !replaced.includes(e));
			const unchanged =
				removedEntries.length === 0 &&
				changes.added.length === 0 &&
				changes.reconnected.length === 0 &&
				changes.updated.length === 0 &&
				kept.every((e, i) => entries[i] === e);
			if (unchanged) return changes;
			entries = kept;
			byName = new Map(entries.map((e) => [e.config.name, e]));
			// The allowed-project lists were filtered with the old rules.
			allowedOf = new WeakMap();
			for (const entry of removedEntries) {
				known.delete(entry);
				// Retired first: its listeners hear `removed` (synchronously) before they detach.
				stopping.push(
					entry.machine.retire ? entry.machine.retire() : entry.machine.stop(),
				);
				detachAll(entry);
			}
			for (const entry of entries)
				if (!known.has(entry)) {
					known.add(entry);
					attachAll(entry);
					if (running) entry.machine.start();
				}
			await Promise.all(stopping);
			return changes;
		},
	};
}
