/** What the thread operations need, passed in so tests control time, ids and storage. */
import type { ClientConfig, ServerSettings } from "../config/types.ts";
import type { Fleet } from "../fleet/fleet.ts";
import type { Holding } from "../pool/hold.ts";
import type { RunSlot, RunSlots } from "../rights/run-slots.ts";
import type { Db } from "../store/db.ts";
import type { DispatchStore } from "../store/dispatches.ts";
import type { OperationStore } from "../store/operations.ts";
import type { ThreadStore } from "../store/threads.ts";
import type { Clock } from "../util/clock.ts";
import type { Logger } from "../util/log.ts";
import type { ModelCatalog } from "./dispatch/model-catalog.ts";

export interface ThreadDeps {
	fleet: Fleet;
	db: Db;
	threads: ThreadStore;
	dispatches: DispatchStore;
	/** Idempotency keys of every tool (src/threads/dispatch/idempotency.ts). */
	operations: OperationStore;
	/** Each machine's models (`server.getConfig`), cached until it reconnects or says they changed. */
	catalog: ModelCatalog;
	settings: Pick<ServerSettings, "waitTimeoutS">;
	log: Logger;
	now: () => number;
	/** Timers of waits (timeouts, progress ticks, retries); default the system clock. */
	clock?: Clock;
	newId: () => string;
	/** How often `t3_wait` sends a progress notification (default 10 s). */
	progressIntervalMs?: number;
	/** How long `t3_threads` waits for a machine's message search (default 2 s). */
	searchTimeoutMs?: number;
	/**
	 * The caller, when its rights are narrower than full (src/rights): runs are held to its
	 * level and its threads are counted against `max_active_runs`. Undefined: every right.
	 */
	client?: ClientConfig;
	/**
	 * The busy-thread caps' ledger, one for the whole server (src/rights/run-slots.ts); without it
	 * (unit tests) a ledger of this fleet's shells is made on first use.
	 */
	slots?: RunSlots;
	/** The slot this dispatch holds (set per call): the record binds it to the thread it mints. */
	slot?: RunSlot;
	/** Held dispatches (pool/hold.ts); without it (unit tests) nothing is ever held. */
	holding?: Holding;
	/** Asks the drain to look again (a held dispatch's slot was given back). */
	drain?: { trigger(machine: "all"): void };
	/**
	 * Set per call when a held dispatch starts: the launch uses its thread id, and its record
	 * marks the held row starting in the same transaction (throws when it was withdrawn first).
	 */
	heldStart?: {
		threadId: string;
		recorded(commandId: string, machine: string): void;
		/** Writes the record through the state file's group commit (resolves once on disk). */
		commit?<T>(write: () => T): Promise<T>;
		/** A write nothing waits for (the run's id on the record): with the next batch. */
		later?(write: () => void): void;
		/** A test's fault point between the record and the send. */
		afterRecord?(): void | Promise<void>;
	};
	/** Aborts on shutdown: waits in progress then return their current state at once. */
	shutdown?: AbortSignal;
}
