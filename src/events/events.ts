/**
 * The event side of the connector as one unit: outbox store, tracker (transitions → rows) and
 * delivery worker (rows → webhook), started and stopped together.
 */
import type { ServerSettings } from "../config/types.ts";
import type { Fleet } from "../fleet/fleet.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { Db } from "../store/db.ts";
import type { DispatchStore } from "../store/dispatches.ts";
import { createOutbox, type Outbox } from "../store/outbox.ts";
import type { ThreadStore } from "../store/threads.ts";
import { type Clock, systemClock } from "../util/clock.ts";
import type { Logger } from "../util/log.ts";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery.ts";
import { DEFAULT_SCHEDULE_S } from "./retry.ts";
import { createTracker, type Tracker } from "./tracker.ts";

export interface Events {
	outbox: Outbox;
	tracker: Tracker;
	delivery: DeliveryWorker;
	start(): void;
	stop(): Promise<void>;
	replayDead(): number;
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
		},
	);
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
	});
	return {
		outbox,
		tracker,
		delivery,
		start() {
			tracker.start();
			delivery.start();
		},
		async stop() {
			tracker.stop();
			await tracker.idle();
			await delivery.stop();
		},
		replayDead() {
			const count = outbox.replayDead(clock.now());
			delivery.wake();
			return count;
		},
	};
}
