/**
 * The delivery worker: POSTs pending outbox rows to the webhook, oldest first per thread
 * (only each thread's head is eligible, so one thread's events never overtake each other),
 * different threads in parallel up to a bound. 2xx delivers; 410 dead-letters; anything else
 * retries on the schedule. Rows stay in sqlite until then, so restarts lose nothing.
 */

import type { Metrics } from "../metrics/metrics.ts";
import { type GroupCommit, immediateCommit } from "../store/group-commit.ts";
import type { EventRow, Outbox } from "../store/outbox.ts";
import type { Clock } from "../util/clock.ts";
import type { Logger } from "../util/log.ts";
import { maskJsonText, redact } from "../util/redact.ts";
import { requestDeadline } from "../util/request-deadline.ts";
import { parseRetryAfter, retryDelayMs } from "./retry.ts";
import { replySnippet, webhookHeaders } from "./webhook-request.ts";

export interface DeliveryOptions {
	url: string | undefined;
	token: string | undefined;
	secret: string | undefined;
	schedule: number[];
	concurrency?: number;
	timeoutMs?: number;
	/** Delivered rows older than this are deleted (default 7 days). */
	retentionMs?: number;
}

export interface DeliveryDeps {
	outbox: Outbox;
	clock: Clock;
	fetch?: typeof fetch;
	random?: () => number;
	metrics: Metrics;
	log: Logger;
	/** Whether a thread's project is not allowed now: its events are held, never sent. */
	isHidden?: (threadId: string) => boolean;
	/**
	 * Where "delivered" is recorded (default: at once). The thread's next event waits for it, so
	 * it is never sent ahead of its predecessor's mark, nor the same event twice.
	 */
	commits?: GroupCommit;
}

export interface DeliveryWorker {
	start(): void;
	/** New rows were committed: look for due work now. */
	wake(): void;
	stop(): Promise<void>;
	/** Resolves when nothing is in flight and nothing is due now (tests). */
	idle(): Promise<void>;
	/** The latest failed attempt's error since the last success, or null. */
	lastError(): string | null;
}

const COMPACT_EVERY_MS = 3600_000;
const BOOKKEEPING_PAUSE_MS = 5_000;

export function createDeliveryWorker(
	options: DeliveryOptions,
	deps: DeliveryDeps,
): DeliveryWorker {
	// Different threads in parallel, bounded: a slow receiver still sees steady progress.
	const concurrency = options.concurrency ?? 32;
	const timeoutMs = options.timeoutMs ?? 10_000;
	const retentionMs = options.retentionMs ?? 7 * 24 * 3600_000;
	const doFetch = deps.fetch ?? fetch;
	const commits = deps.commits ?? immediateCommit;
	/** A pump waits for the sync of committed rows. */
	let gated = false;
	/** Outbox rows up to this rowid are on disk: sendable while newer rows are being synced. */
	let syncedUpTo = 0;
	const inFlight = new Map<string, Promise<void>>();
	let cancelTimer: (() => void) | undefined;
	let cancelCompaction: (() => void) | undefined;
	let stopped = true;
	/** Set after the outbox could not be written: no attempts before then. */
	let pausedUntil = 0;
	let lastError: string | null = null;

	const schedule = () => {
		cancelTimer?.();
		cancelTimer = undefined;
		// While attempts are in flight, each one's end pumps and schedules again: a timer (or
		// the query for the next due time) here would only spin.
		if (stopped || !options.url || inFlight.size > 0) return;
		const now = deps.clock.now();
		if (pausedUntil > now) {
			cancelTimer = deps.clock.setTimer(pump, pausedUntil - now);
			return;
		}
		const at = deps.outbox.nextDueAt();
		if (at === null) return;
		cancelTimer = deps.clock.setTimer(pump, at - now);
	};

	function pump() {
		if (stopped || !options.url) return;
		// Rows committed but not on disk yet are visible already: never sent before they are.
		// Under load a newer batch is nearly always being synced, so what to wait for is the
		// syncs of the rows there are now; rows up to them are sent once those end, whatever
		// is being synced by then (waiting for no sync in flight starved delivery for 100s of
		// ms when an fsync took longer than the gap between outcomes).
		const unsynced = commits.unsynced();
		if (!unsynced) syncedUpTo = deps.outbox.lastRowid();
		else if (!gated) {
			gated = true;
			const upTo = deps.outbox.lastRowid();
			void unsynced.then(() => {
				gated = false;
				syncedUpTo = Math.max(syncedUpTo, upTo);
				pump();
			});
		}
		if (pausedUntil > deps.clock.now()) {
			schedule();
			return;
		}
		const free = concurrency - inFlight.size;
		if (free > 0) {
			const busyThreads = new Set([...inFlight.keys()]);
			for (const row of deps.outbox.due(
				deps.clock.now(),
				concurrency * 2,
				syncedUpTo,
			)) {
				if (inFlight.size >= concurrency) break;
				if (busyThreads.has(row.thread_id)) continue;
				busyThreads.add(row.thread_id);
				// Checked right before sending, whatever marked the row pending.
				if (deps.isHidden?.(row.thread_id)) {
					deps.outbox.hold(row.thread_id);
					continue;
				}
				const task = attempt(row)
					.catch((error: unknown) => {
						// The outcome could not be recorded (full disk, read-only file): the row is
						// still pending and due. Pause, or the same event would be re-sent in a loop.
						pausedUntil = deps.clock.now() + BOOKKEEPING_PAUSE_MS;
						deps.log.error(
							"webhook delivery bookkeeping failed; pausing deliveries",
							{
								event: row.id,
								error,
							},
						);
					})
					.finally(() => {
						inFlight.delete(row.thread_id);
						pump();
					});
				inFlight.set(row.thread_id, task);
			}
		}
		// Gated: the sync's end pumps again (a timer for rows not sendable yet would spin).
		if (!gated) schedule();
	}

	async function attempt(row: EventRow): Promise<void> {
		const url = options.url as string;
		// Masked when stored; once more here, for a secret configured since.
		const body = maskJsonText(row.body);
		const timestampS = Math.floor(deps.clock.now() / 1000);
		const headers = webhookHeaders(
			options,
			{ id: row.id, origin: row.origin, body },
			timestampS,
		);
		let status = 0;
		let error: string;
		let retryAfter: number | undefined;
		// Real time, not deps.clock: a test's clock moving retries forward must not cut a POST.
		const deadline = requestDeadline(timeoutMs);
		try {
			const response = await doFetch(url, {
				method: "POST",
				headers,
				body,
				redirect: "manual",
				signal: deadline.signal,
			});
			status = response.status;
			retryAfter = parseRetryAfter(
				response.headers.get("retry-after"),
				deps.clock.now(),
			);
			const said =
				status >= 200 && status < 300 ? "" : await replySnippet(response);
			await response.body?.cancel().catch(() => {});
			// The receiver's words help the operator (a 400 saying why), once made safe to show.
			error = redact(said ? `HTTP ${status}: ${said}` : `HTTP ${status}`);
		} catch (cause) {
			error = redact(
				cause instanceof Error
					? `${cause.name}: ${cause.message}`
					: String(cause),
			);
		} finally {
			deadline.done();
		}
		const now = deps.clock.now();
		if (status >= 200 && status < 300) {
			// Lost in a power cut, the mark only means this event is sent again (at least once).
			await commits.run(() => deps.outbox.markDelivered(row.id, now), {
				durable: false,
			});
			lastError = null;
			deps.metrics.inc("t3code_mcp_events_delivered_total");
			deps.metrics.inc("t3code_mcp_delivery_attempts_total", {
				result: "delivered",
			});
			deps.metrics.observe(
				"t3code_mcp_event_delivery_latency_seconds",
				(now - row.created_at) / 1000,
			);
			return;
		}
		deps.metrics.inc("t3code_mcp_delivery_attempts_total", {
			result: status ? String(status) : "error",
		});
		lastError = error;
		const delay =
			status === 410
				? null
				: retryDelayMs(
						options.schedule,
						row.attempts + 1,
						deps.random,
						retryAfter,
					);
		if (delay === null) {
			deps.outbox.markDead(row.id, error);
			deps.metrics.inc("t3code_mcp_events_dead_total");
			deps.log.warn("webhook event dead-lettered", {
				event: row.id,
				thread: row.thread_id,
				error,
			});
			return;
		}
		deps.outbox.markRetry(row.id, now + delay, error);
		deps.log.info("webhook delivery failed; will retry", {
			event: row.id,
			error,
			retry_in_s: Math.round(delay / 1000),
		});
	}

	const compact = () => {
		const removed = deps.outbox.compact(deps.clock.now() - retentionMs);
		if (removed) deps.log.debug("compacted delivered events", { removed });
		cancelCompaction = deps.clock.setTimer(compact, COMPACT_EVERY_MS);
	};

	return {
		start() {
			stopped = false;
			compact();
			pump();
		},
		wake() {
			pump();
		},
		async stop() {
			stopped = true;
			cancelTimer?.();
			cancelCompaction?.();
			await Promise.all(inFlight.values());
		},
		lastError: () => lastError,
		async idle() {
			while (inFlight.size) await Promise.all(inFlight.values());
		},
	};
}
