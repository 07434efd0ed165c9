/**
 * The people's channel (CONTRACT.md "Approval links"): `approval.requested` and
 * `approval.settled` go to `[approvals] hook_url` only, through an outbox of their own
 * (`people_events`, durable, retried, signed like every event) and a delivery worker of their
 * own. The raw token exists only in a pending row's body: once the row is delivered or dead,
 * the link in it is masked.
 */
import type { ApprovalsConfig, ServerSettings } from "../config/types.ts";
import {
	createDeliveryWorker,
	type DeliveryWorker,
} from "../events/delivery.ts";
import { DEFAULT_SCHEDULE_S } from "../events/retry.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { Db } from "../store/db.ts";
import { createOutbox, type Outbox } from "../store/outbox.ts";
import type { Clock } from "../util/clock.ts";
import type { Logger } from "../util/log.ts";
import { maskLinkPaths } from "../util/redact.ts";

export interface PeopleHook {
	outbox: Outbox;
	delivery: DeliveryWorker;
	/** Inserts an event row (skipped when its dedupe key exists); true when inserted. */
	emit(row: {
		id: string;
		thread_id: string;
		dedupe_key: string;
		type: string;
		origin: string | null;
		body: Record<string, unknown>;
	}): boolean;
}

/** The people outbox with a link masked in each row it leaves (delivered or dead). */
export function peopleOutbox(db: Db): Outbox {
	const outbox = createOutbox(db, "people_events");
	return {
		...outbox,
		markDelivered(id, now) {
			outbox.markDelivered(id, now);
			outbox.rewriteBody(id, maskLinkPaths);
		},
		markDead(id, error) {
			outbox.markDead(id, error);
			outbox.rewriteBody(id, maskLinkPaths);
		},
	};
}

export function createPeopleHook(
	approvals: ApprovalsConfig,
	settings: Pick<ServerSettings, "hookSecret">,
	deps: {
		db: Db;
		clock: Clock;
		metrics: Metrics;
		log: Logger;
		fetch?: typeof fetch;
		retryScheduleS?: number[];
	},
): PeopleHook {
	const outbox = peopleOutbox(deps.db);
	const seq = deps.db.query<{ seq: number | null }, { thread: string }>(
		"SELECT max(thread_seq) AS seq FROM people_events WHERE thread_id = $thread",
	);
	const delivery = createDeliveryWorker(
		{
			url: approvals.hookUrl,
			token: approvals.hookToken,
			secret: settings.hookSecret,
			schedule: deps.retryScheduleS ?? DEFAULT_SCHEDULE_S,
		},
		{
			outbox,
			clock: deps.clock,
			fetch: deps.fetch,
			metrics: deps.metrics,
			log: deps.log.child({ hook: "people" }),
		},
	);
	return {
		outbox,
		delivery,
		emit(row) {
			if (outbox.has(row.thread_id, row.dedupe_key)) return false;
			outbox.insert({
				id: row.id,
				thread_id: row.thread_id,
				thread_seq: (seq.get({ thread: row.thread_id })?.seq ?? 0) + 1,
				dedupe_key: row.dedupe_key,
				type: row.type,
				origin: row.origin,
				body: JSON.stringify(row.body),
				created_at: deps.clock.now(),
			});
			delivery.wake();
			return true;
		},
	};
}
