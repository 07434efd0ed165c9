/**
 * Wires the long-lived parts together: the fleet of machines, the state database, the thread
 * operations and event tracking. `index.ts` creates it once; tests create their own.
 */

import { type Approvals, createApprovals } from "./approvals/approvals.ts";
import { DEFAULT_CLIENT, OPEN_CALLER } from "./config/clients.ts";
import {
	type ConfigDiff,
	diffConfig,
	keepUnchangedClients,
} from "./config/config-diff.ts";
import type { AppConfig, ClientConfig, MachineConfig } from "./config/types.ts";
import { createEvents, type Events } from "./events/events.ts";
import { followWatched } from "./events/follow-watched.ts";
import { heldEvents } from "./events/held-events.ts";
import { collectDuringBursts } from "./fleet/collect-garbage.ts";
import { createFleet, type Fleet, type FleetChanges } from "./fleet/fleet.ts";
import { switchableMachine } from "./fleet/switchable-machine.ts";
import { createMetrics, type Metrics } from "./metrics/metrics.ts";
import { activeRuns } from "./pool/capacity.ts";
import { candidateMachines, createDrain, type Drain } from "./pool/drain.ts";
import {
	createHolding,
	DEFAULT_CLIENT_MAX_HELD,
	DEFAULT_SERVER_MAX_HELD,
	type Holding,
} from "./pool/hold.ts";
import { forgetClientViews, servicesForClient } from "./rights/for-client.ts";
import {
	createRunSlots,
	fleetShells,
	type RunSlots,
} from "./rights/run-slots.ts";
import { type AuditStore, createAuditStore } from "./store/audit.ts";
import type { Db } from "./store/db.ts";
import { createDispatchStore } from "./store/dispatches.ts";
import { createHeldStore } from "./store/held-store.ts";
import { createOperationStore, hiddenOperation } from "./store/operations.ts";
import { openState } from "./store/state-file.ts";
import { createThreadStore } from "./store/threads.ts";
import { createTokenExpiryStore } from "./store/token-expiries.ts";
import { createWriteProbe, type WriteProbe } from "./store/write-probe.ts";
import { learningSteer } from "./t3/capabilities/learned-steer.ts";
import { createMachine } from "./t3/connect/machine.ts";
import {
	createKeptThreadViews,
	followThreads,
} from "./t3/follow/thread-follow.ts";
import type { Machine } from "./t3/machine-api.ts";
import {
	createTaskService,
	type TaskService,
	type TaskShaper,
} from "./tasks/task-service.ts";
import type { ThreadDeps } from "./threads/deps.ts";
import {
	heldStarter,
	type StartFaults,
} from "./threads/dispatch/held-start.ts";
import { createModelCatalog } from "./threads/dispatch/model-catalog.ts";
import { type Clock, systemClock } from "./util/clock.ts";
import type { Logger } from "./util/log.ts";
import { registerConfigSecrets } from "./util/redact.ts";

export interface Services {
	version: string;
	config: AppConfig;
	log: Logger;
	fleet: Fleet;
	db: Db;
	threadDeps: ThreadDeps;
	metrics: Metrics;
	events: Events;
	/** MCP tasks: waits that outlive their request (src/tasks). */
	tasks: TaskService;
	writeProbe: WriteProbe;
	/** Every change a client asked for, allowed or refused (src/store/audit.ts). */
	audit: AuditStore;
	/** Why this process runs without its state file (stdio beside a server), else null. */
	stateNote: string | null;
	/** Approval links for people and their own hook (src/approvals). */
	approvals: Approvals;
	/** Held dispatches (src/pool/hold.ts) and what starts them (src/pool/drain.ts). */
	holding: Holding;
	drain: Drain;
	start(): void;
	/**
	 * Applies a config read again (SIGHUP): clients at the next request, machines added,
	 * removed or reconnected as changed (the others keep their sockets), live `[server]` keys.
	 */
	reload(next: AppConfig): Promise<ReloadReport>;
	/** Makes every wait in progress return its current state now. */
	beginShutdown(): void;
	/** Ends waits (they return their current state), closes sockets, then the database. */
	stop(): Promise<void>;
}

/** What a reload changed: for the log. */
export type ReloadReport = ConfigDiff & { machines: FleetChanges };

/** Top-level config parts a reload swaps whole (the rest: `file`, and `[server]` key by key). */
const SWAPPED_PARTS = new Set(["file", "server"]);

export interface ServiceOptions {
	version: string;
	log: Logger;
	/** How a task's wait becomes its result: handed in by the MCP tool layer, which owns result shapes. */
	taskShaper: TaskShaper;
	newId?: () => string;
	progressIntervalMs?: number;
	/** How long `t3_threads` waits for a machine's message search (default 2 s). */
	searchTimeoutMs?: number;
	machineFactory?: (config: MachineConfig) => Machine;
	clock?: Clock;
	fetch?: typeof fetch;
	retryScheduleS?: number[];
	/** Bound of thread subscriptions per machine (default 256). */
	maxFollowedThreads?: number;
	stateNote?: string;
	/** The `pollIntervalMs` tasks suggest (default 1 s). */
	taskPollIntervalMs?: number;
	/** How many MCP tasks are kept at most (default 10 000). */
	maxTasks?: number;
	/** Tests only: fault points around a held dispatch's record and send. */
	heldFaults?: StartFaults;
}

export function createServices(
	config: AppConfig,
	options: ServiceOptions,
): Services {
	const { log } = options;
	// Before anything can log or talk to a machine: from here on every secret is masked.
	registerConfigSecrets(config);
	const metrics = createMetrics();
	// Locks the state file for this process's lifetime; throws a StartupError when it cannot.
	const state = openState(config.server.statePath);
	const { db } = state;
	const shutdown = new AbortController();
	const tokenExpiries = createTokenExpiryStore(db, {
		onError: (error) =>
			log.warn("could not record token expiries in the state file", { error }),
	});
	const makeMachine =
		options.machineFactory ??
		((machine) =>
			createMachine(machine, {
				log,
				pingTimeoutMs: config.server.pingTimeoutS * 1000,
				tokenExpiry: {
					get: (token) => tokenExpiries.get(machine.name, token),
					set: (token, at) => tokenExpiries.set(machine.name, token, at),
				},
			}));
	// One budget for the views every machine keeps after release (src/t3/follow/kept-views.ts).
	const keptViews = createKeptThreadViews();
	const fleet = createFleet(config.machines, (machine) => {
		metrics.inc(
			"t3code_mcp_follow_fallbacks_total",
			{ machine: machine.name },
			0,
		);
		return learningSteer(
			followThreads(switchableMachine(machine, makeMachine), {
				log,
				keptViews,
				...(options.maxFollowedThreads !== undefined
					? { maxThreads: options.maxFollowedThreads }
					: {}),
				onFallback: () =>
					metrics.inc("t3code_mcp_follow_fallbacks_total", {
						machine: machine.name,
					}),
			}),
		);
	});
	const clock = options.clock ?? systemClock;
	let stopFollowing = () => {};
	let stopCollecting = () => {};
	// Hidden means nonexistent: the stores' reads leave out records of projects not allowed now.
	const threads = createThreadStore(db, (record) => fleet.allowsRecord(record));
	const threadDeps: ThreadDeps = {
		fleet,
		db,
		threads,
		dispatches: createDispatchStore(db),
		operations: createOperationStore(
			db,
			hiddenOperation(threads.isHidden, (r) => fleet.allowsRecord(r)),
		),
		catalog: createModelCatalog(fleet),
		settings: config.server,
		log,
		now: () => clock.now(),
		clock,
		newId: options.newId ?? (() => crypto.randomUUID()),
		progressIntervalMs: options.progressIntervalMs,
		searchTimeoutMs: options.searchTimeoutMs,
		shutdown: shutdown.signal,
		slots: createRunSlots(fleetShells(fleet), () => clock.now()),
	};
	/**
	 * A client as configured now (a reload replaces them); `default` without a table of its own
	 * is the open caller (no clients, or stdio without T3CODE_MCP_CLIENT).
	 */
	const clientNamed = (name: string): ClientConfig | undefined =>
		config.clients.find((c) => c.name === name) ??
		(name === DEFAULT_CLIENT ? OPEN_CALLER : undefined);
	let emitHeld: ReturnType<typeof heldEvents> | undefined;
	let groupCommit: (<T>(write: () => T) => Promise<T>) | undefined;
	const holding = createHolding({
		db,
		store: createHeldStore(db),
		now: () => clock.now(),
		candidates: candidateMachines(fleet, clientNamed),
		maxHeld: () => ({
			server: config.server.maxHeld ?? DEFAULT_SERVER_MAX_HELD,
			client: (name) => clientNamed(name)?.maxHeld ?? DEFAULT_CLIENT_MAX_HELD,
		}),
		onStarted: (head, info) => emitHeld?.started(head, info),
		commit: () => groupCommit,
		onNeverStarted: (head, error, watched) =>
			emitHeld?.neverStarted(head, error, watched),
	});
	threadDeps.holding = holding;
	const events = createEvents({
		settings: config.server,
		fleet,
		db,
		threads: threadDeps.threads,
		dispatches: threadDeps.dispatches,
		metrics,
		log,
		clock,
		fetch: options.fetch,
		retryScheduleS: options.retryScheduleS,
	});
	const tasks = createTaskService({
		deps: threadDeps,
		fleet,
		db,
		shape: options.taskShaper,
		ttlS: config.server.taskTtlS,
		pollIntervalMs: options.taskPollIntervalMs,
		maxTasks: options.maxTasks,
	});
	// A start's mark carries its thread.started event: delivered once on disk.
	groupCommit = async (write) => {
		const value = await events.commits.run(write);
		events.delivery.wake();
		return value;
	};
	emitHeld = heldEvents({
		outbox: events.outbox,
		threads: threadDeps.threads,
		now: () => clock.now(),
	});
	const starter = heldStarter({
		base: threadDeps,
		depsFor: (name) => {
			const client = clientNamed(name);
			return client
				? servicesForClient(services, client).threadDeps
				: undefined;
		},
		faults: options.heldFaults,
		commit: (write) => events.commits.run(write),
	});
	const drain = createDrain({
		holding,
		fleet,
		clock,
		log,
		clientOfThread: (id) => threadDeps.threads.get(id)?.client ?? null,
		hasRoom: (name) => {
			const entry = fleet.get(name);
			if (entry?.machine.status().state !== "online") return false;
			const cap = entry.config.maxActiveRuns;
			return (
				cap === undefined ||
				cap === null ||
				activeRuns(threadDeps.slots as RunSlots, entry) < cap
			);
		},
		tryStart: starter.tryStart,
		replay: starter.replay,
	});
	threadDeps.drain = drain;
	// A held dispatch that starts or never starts wakes the webhook's delivery at once.
	holding.onEnd(() => events.delivery.wake());
	const services: Services = {
		version: options.version,
		config,
		log,
		fleet,
		db,
		threadDeps,
		metrics,
		events,
		tasks,
		writeProbe: createWriteProbe(db),
		audit: createAuditStore(db, config.server.auditDays),
		stateNote: options.stateNote ?? null,
		holding,
		drain,
		approvals: createApprovals(() => services, {
			clock,
			fetch: options.fetch,
			retryScheduleS: options.retryScheduleS,
		}),
		start() {
			countReconnects(fleet, metrics);
			stopCollecting = collectDuringBursts(fleet);
			fleet.start();
			// Following first: a shell change showing a new run then opens the thread's stream
			// before the tracker looks, and the tracker reads that run from the subscription instead
			// of a projection GET of its own (one per run started elsewhere, under load ~100/s).
			stopFollowing = followWatched({
				fleet,
				threads: threadDeps.threads,
				now: () => clock.now(),
			});
			events.start();
			services.approvals.start();
			tasks.start();
			drain.start();
		},
		async reload(next) {
			// Before anything can log or use them: the new secrets are masked too.
			registerConfigSecrets(next);
			const diff = diffConfig(config, next);
			const running = config as unknown as Record<string, unknown>;
			for (const [key, value] of Object.entries(next))
				if (!SWAPPED_PARTS.has(key)) running[key] = value;
			config.clients = keepUnchangedClients(config.clients, next.clients);
			const server = config.server as unknown as Record<string, unknown>;
			for (const key of diff.server.applied) server[key] = next.server[key];
			// Views made for the old clients and machines are dropped: the next request makes anew.
			forgetClientViews(services);
			const machines = await fleet.reconcile(next.machines);
			// Held dispatches are judged again against the clients and machines as they are now.
			drain.trigger("all");
			return { ...diff, machines };
		},
		beginShutdown() {
			shutdown.abort();
		},
		async stop() {
			shutdown.abort();
			drain.stop();
			stopFollowing();
			stopCollecting();
			await services.approvals.stop();
			await events.stop();
			await tasks.stop();
			await fleet.stop();
			tokenExpiries.flush();
			db.close();
			state.lock?.release();
		},
	};
	return services;
}

/** Counts each return to online after the first, per machine (for /metrics). */
function countReconnects(fleet: Fleet, metrics: Metrics): void {
	fleet.forEachMachine((entry) => {
		let wasOnline = false;
		return entry.machine.onChange((change) => {
			if (change.kind !== "state" || change.status.state !== "online") return;
			if (wasOnline)
				metrics.inc("t3code_mcp_machine_reconnects_total", {
					machine: entry.config.name,
				});
			wasOnline = true;
		});
	});
}
