/**
 * The event side of the connector as one unit: outbox store, tracker (transitions → rows) and
 * delivery worker (rows → webhook), started and stopped together. Events of threads whose
 * project is not allowed now are held (kept, not sent) and flow again once it is: checked at
 * start and whenever a machine's shell is replaced (the projects a record is judged on). Machine
 * events (machine-events.ts) share the outbox and the worker; those of a machine no longer
 * configured are held the same way.
 */
import type { ServerSettings } from "../config/types.ts";
import type { Fleet } from "../fleet/fleet.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { Db } from "../store/db.ts";
import type { DispatchStore } from "../store/dispatches.ts";
import {
	createGroupCommit,
	type GroupCommit,
	walSync,
} from "../store/group-commit.ts";
import { createMachineAlertStore } from "../store/machine-alerts.ts";
import { createOutbox, type Outbox } from "../store/outbox.ts";
import type { ThreadStore } from "../store/threads.ts";
import { type Clock, systemClock } from "../util/clock.ts";
import type { Logger } from "../util/log.ts";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery.ts";
import {
	createMachineEvents,
	type MachineEvents,
	machineOfEventKey,
} from "./machine-events.ts";
import { DEFAULT_SCHEDULE_S } from "./retry.ts";
import { createTracker, type Tracker } from "./tracker.ts";

export interface Events {
	outbox: Outbox;
	tracker: Tracker;
	delivery: DeliveryWorker;
	/** `machine.token_expiring` and `machine.unauthorized`. */
	machines: MachineEvents;
	start(): void;
	stop(): Promise<void>;
	replayDead(): number;
	/** Holds the waiting events of hidden threads and releases those allowed again. */
	reconcile(): void;
	/** The state file's group commit (one batch per turn, synced off the event loop). */
	commits: GroupCommit;
}

export interface EventsDeps {
	settings: Pick<ServerSettings, "hookUrl" | "hookToken" | "hookSecret">;
	fleet: Fleet;
	db: Db;
	threads: ThreadStore;
	dispatches: DispatchStore;
	metrics: Metrics;
	log: Logger;
	clock?: Clock;
	fetch?: typeof fetch;
	random?: () => number;
	retryScheduleS?: number[];
}

export function createEvents(deps: EventsDeps): Events {
	const clock = deps.clock ?? systemClock;
	const outbox = createOutbox(deps.db);
	// Outbox rows and delivery marks of one turn share one commit, synced off the event loop.
	const wal = walSync(deps.db);
	const commits = createGroupCommit(deps.db, undefined, wal);
	// An outbox key is a thread's id or a machine's (machine-events.ts).
	const isHidden = (key: string) => {
		const machine = machineOfEventKey(key);
		return machine === null
			? deps.threads.isHidden(key)
			: deps.fleet.get(machine) === undefined;
	};
	const delivery = createDeliveryWorker(
		{
			url: deps.settings.hookUrl,
			token: deps.settings.hookToken,
			secret: deps.settings.hookSecret,
			schedule: deps.retryScheduleS ?? DEFAULT_SCHEDULE_S,
		},
		{
			outbox,
			clock,
			fetch: deps.fetch,
			random: deps.random,
			metrics: deps.metrics,
			log: deps.log,
			isHidden,
			commits,
		},
	);
	const reconcile = () => {
		let released = 0;
		for (const { thread_id, status } of outbox.waiting()) {
			const hidden = isHidden(thread_id);
			if (hidden && status === "pending") outbox.hold(thread_id);
			else if (!hidden && status === "held")
				released += outbox.release(thread_id);
		}
		if (released) delivery.wake();
	};
	const unsubscribes: (() => void)[] = [];
	const tracker = createTracker({
		fleet: deps.fleet,
		db: deps.db,
		threads: deps.threads,
		dispatches: deps.dispatches,
		outbox,
		metrics: deps.metrics,
		log: deps.log,
		now: () => clock.now(),
		onEmitted: () => delivery.wake(),
		commits,
	});
	const machines = createMachineEvents({
		fleet: deps.fleet,
		outbox,
		alerts: createMachineAlertStore(deps.db),
		commits,
		clock,
		metrics: deps.metrics,
		log: deps.log,
		onEmitted: () => delivery.wake(),
	});
	return {
		outbox,
		tracker,
		delivery,
		machines,
		start() {
			reconcile();
			unsubscribes.push(
				deps.fleet.forEachMachine((entry) =>
					entry.machine.onChange((change) => {
						if (change.kind === "snapshot") reconcile();
					}),
				),
			);
			tracker.start();
			delivery.start();
			machines.start();
		},
		async stop() {
			for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
			await machines.stop();
			tracker.stop();
			await tracker.idle();
			await delivery.stop();
			await commits.drained();
			commits.close?.();
			wal?.close();
		},
		replayDead() {
			const count = outbox.replayDead(clock.now());
			reconcile();
			delivery.wake();
			return count;
		},
		reconcile,
		commits,
	};
}
