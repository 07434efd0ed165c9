/**
 * Thread following: a Machine wrapper that, while someone holds a lease on a thread (a watched
 * run going, an open t3_wait), keeps that thread's `subscribeThread` stream (PROTOCOL.md §8.3)
 * open and its projection in memory. The thread stream shows a run's outcome or a new request
 * at once, where the shell shows it coalesced and up to ~450 ms later (OBSERVED.md §7), so:
 * - `thread()`/`threads()` carry the activity derived from the followed rows when those are at
 *   least as new as the shell, and a change is emitted as soon as that activity moves;
 * - `getThread()` answers from memory when the followed projection is live, complete and not
 *   behind the shell or our own last command (read your writes); otherwise it GETs.
 * A drop resumes with `afterSequence` once the machine is back; a stream that cannot resume,
 * or a thread beyond `maxThreads`, falls back to the shell + GET path.
 */

import { notifyAll } from "../../util/listeners.ts";
import type { Logger } from "../../util/log.ts";
import { compactThreadShell } from "../decode/shell.ts";
import { decodeThreadStreamItem } from "../decode/thread-stream.ts";
import type { Machine, ShellChange } from "../machine-api.ts";
import type { ThreadShell } from "../model.ts";
import {
	type Activity,
	createFollowedProjection,
	type FollowedProjection,
	sameActivity,
} from "./followed-projection.ts";
import {
	createKeptViews,
	KEPT_ROWS,
	KEPT_ROWS_PER_VIEW,
	type KeptViews,
} from "./kept-views.ts";

export interface FollowOptions {
	log: Logger;
	/** Most threads followed at once on this machine (default 256). */
	maxThreads?: number;
	/** How long a released thread stays subscribed while the shell catches up (default 2 s). */
	lingerMs?: number;
	/** How long a read waits for a subscription on its way before it GETs (default 2 s). */
	catchUpMs?: number;
	/**
	 * How long a read of a live stream behind the shell or our last command waits for it to
	 * catch up before it GETs (default 250 ms; 0: GET at once). Its next frames are usually on
	 * the way; a GET is a second round trip that a busy server answers last.
	 */
	behindMs?: number;
	/** A thread could not be followed (bound reached or its stream could not resume). */
	onFallback?: () => void;
	/** Views kept after release, shared by every machine (default: this machine's own). */
	keptViews?: KeptViews<KeptView>;
}

/** A released thread's view and the sequence its stream had reached. */
export interface KeptView {
	view: FollowedProjection;
	lastSeq: number;
	/** False for a bounded window (older rows left out). */
	complete: boolean;
}

interface Followed {
	threadId: string;
	leases: number;
	stream: { cancel(): void } | null;
	/** Snapshot received (or resumed) and `synchronized` seen on the current stream. */
	live: boolean;
	/** The stream ended for good; reads use the shell path until the lease is renewed. */
	failed: boolean;
	view: FollowedProjection | null;
	/** A bounded snapshot lacks older rows: not served from memory. */
	complete: boolean;
	lastSeq: number;
	/**
	 * Shell sequences up to this one were applied before this stream caught up, so the stream
	 * covers them: a shell snapshot's sequence is the store head, not the thread's last event.
	 */
	shellFloor: number;
	emitted: Activity | null;
	linger: ReturnType<typeof setTimeout> | undefined;
	lingerShort: boolean;
	/** Reads waiting for the stream to catch up. */
	waiters: (() => void)[];
}

/**
 * The views kept after release. Past the budget a view is trimmed to its latest run's rows:
 * enough to resume and to cover the next run, after which it is a window (whole-thread reads GET).
 */
export function createKeptThreadViews(
	maxRows = KEPT_ROWS,
	maxRowsPerView = KEPT_ROWS_PER_VIEW,
): KeptViews<KeptView> {
	return createKeptViews<KeptView>(maxRows, maxRowsPerView, (kept) => {
		kept.view.trimToRecent();
		kept.complete = false;
		return kept.view.rowCount();
	});
}

export const DEFAULT_MAX_FOLLOWED = 256;
/** How long a released, caught-up thread stays subscribed (a follow-up often comes at once). */
const RETIRE_MS = 100;

export function followThreads(inner: Machine, options: FollowOptions): Machine {
	if (!inner.openStream) return inner;
	const openStream = inner.openStream.bind(inner);
	const log = options.log.child({ machine: inner.name });
	const maxThreads = options.maxThreads ?? DEFAULT_MAX_FOLLOWED;
	const lingerMs = options.lingerMs ?? 2_000;
	const catchUpMs = options.catchUpMs ?? 2_000;
	const behindMs = options.behindMs ?? 250;
	const followed = new Map<string, Followed>();
	/** Views of threads no longer followed, under a row budget (kept-views.ts). */
	const kept = options.keptViews ?? createKeptThreadViews();
	const keyOf = (threadId: string) => `${inner.name}\u0000${threadId}`;
	/** The sequence of the latest shell update per thread, and of our latest command. */
	const shellSeq = new Map<string, number>();
	const commandSeq = new Map<string, number>();
	const listeners = new Set<(change: ShellChange) => void>();
	const workListeners = new Set<(threadId: string) => void>();
	const dirty = new Set<string>();
	let flushQueued = false;
	let fallbacks = 0;

	function emit(change: ShellChange): void {
		notifyAll(listeners, change, log, "shell change");
	}

	/** Followed rows are at least as new as everything the shell and our commands showed. */
	const current = (f: Followed) => {
		if (f.view === null || f.failed) return false;
		const shown = shellSeq.get(f.threadId) ?? 0;
		return (
			(f.lastSeq >= shown || shown <= f.shellFloor) &&
			f.lastSeq >= (commandSeq.get(f.threadId) ?? 0)
		);
	};

	function overlay(shell: ThreadShell | undefined): ThreadShell | undefined {
		if (!shell) return shell;
		const f = followed.get(shell.id);
		if (!f?.view || !current(f)) return shell;
		return { ...shell, ...f.view.activity() };
	}

	/**
	 * A followed thread the coalesced shell has not shown yet (one we just dispatched): its
	 * state from the stream, as the change emitted for it says, so a reader of `thread()` (the
	 * event tracker) acts on that change instead of waiting for the shell.
	 */
	function followedOnly(threadId: string): ThreadShell | undefined {
		const f = followed.get(threadId);
		if (!f?.view || !f.live || !current(f)) return undefined;
		return { ...compactThreadShell(f.view.thread()), ...f.view.activity() };
	}

	function markDirty(threadId: string): void {
		dirty.add(threadId);
		if (flushQueued) return;
		flushQueued = true;
		// After the whole Chunk is applied: the stream sends a request and its turn item, or a
		// run's last rows, in one Chunk, and listeners should see them together.
		queueMicrotask(flush);
	}

	function flush(): void {
		flushQueued = false;
		const ids = [...dirty];
		dirty.clear();
		for (const threadId of ids) {
			const f = followed.get(threadId);
			if (!f?.view || !f.live || !current(f)) continue;
			const activity = f.view.activity();
			if (f.emitted && sameActivity(f.emitted, activity)) continue;
			const shell = inner.thread(threadId);
			const previous = overlayOf(shell, f.emitted);
			f.emitted = activity;
			const thread = shell
				? { ...shell, ...activity }
				: { ...compactThreadShell(f.view.thread()), ...activity };
			emit({ kind: "thread", thread, sequence: f.lastSeq, previous });
		}
	}

	function overlayOf(
		shell: ThreadShell | undefined,
		activity: Activity | null,
	): ThreadShell | undefined {
		return shell && activity ? { ...shell, ...activity } : shell;
	}

	function open(f: Followed): void {
		if (f.stream || f.failed) return;
		const payload: Record<string, unknown> = {
			threadId: f.threadId,
			requestCompletionMarker: true,
			// A newer T3 then sends the latest turns instead of the whole history (the pre-release
			// ignores it): under load every new run on a thread took a snapshot of all of it.
			acceptBoundedSnapshot: true,
		};
		const resume = f.view !== null;
		if (resume) payload.afterSequence = f.lastSeq;
		f.live = false;
		const stream = openStream(
			"orchestration.subscribeThread",
			payload,
			(raw) => {
				if (f.stream !== stream) return;
				onItem(f, raw);
			},
			(end) => {
				if (f.stream !== stream) return;
				f.stream = null;
				f.live = false;
				wakeWaiters(f);
				if (!end.ok && end.kind === "disconnected") return; // resumed once online again
				if (resume && followed.get(f.threadId) === f) {
					// The cursor was refused: start over from a snapshot once.
					log.debug("thread stream ended; resubscribing from a snapshot", {
						threadId: f.threadId,
					});
					f.view = null;
					f.lastSeq = 0;
					open(f);
					return;
				}
				f.failed = true;
				fallbacks += 1;
				options.onFallback?.();
				log.info("thread stream ended; using the shell for this thread", {
					threadId: f.threadId,
				});
			},
		);
		f.stream = stream;
	}

	function onItem(f: Followed, raw: unknown): void {
		const item = decodeThreadStreamItem(raw);
		switch (item.kind) {
			case "snapshot":
				f.view = createFollowedProjection(item.projection);
				f.lastSeq = item.snapshotSequence;
				f.complete = item.hasMoreHistory !== true;
				break;
			case "event":
				// Replays overlap: drop what was applied already (§8.1).
				if (!f.view || item.sequence <= f.lastSeq) return;
				if (!f.view.apply(item.event))
					log.debug("thread event without a usable row", {
						threadId: f.threadId,
						type: item.event.type,
					});
				f.lastSeq = item.sequence;
				// A read waiting for the stream to catch up: it has (the rest of the Chunk is applied
				// before the read goes on).
				if (f.live && f.waiters.length > 0 && current(f)) wakeWaiters(f);
				break;
			case "synchronized":
				f.live = f.view !== null;
				f.shellFloor = shellSeq.get(f.threadId) ?? 0;
				wakeWaiters(f);
				break;
			default:
				return;
		}
		markDirty(f.threadId);
	}

	/** Resolves when the stream has caught up, ended, or after `ms`. */
	function caughtUp(f: Followed, ms: number): Promise<void> {
		return new Promise((resolve) => {
			const timer = setTimeout(done, ms);
			f.waiters.push(done);
			function done() {
				clearTimeout(timer);
				resolve();
			}
		});
	}

	function wakeWaiters(f: Followed): void {
		for (const wake of f.waiters.splice(0)) wake();
	}

	function close(f: Followed, keep = true): void {
		wakeWaiters(f);
		if (f.linger) clearTimeout(f.linger);
		f.linger = undefined;
		const stream = f.stream;
		f.stream = null;
		stream?.cancel();
		if (followed.get(f.threadId) === f) followed.delete(f.threadId);
		// Kept for the next follow to resume from (only the events since, instead of a snapshot
		// of the whole history, which under load grew with every run).
		if (keep && f.view && !f.failed)
			kept.keep(
				keyOf(f.threadId),
				{ view: f.view, lastSeq: f.lastSeq, complete: f.complete },
				f.view.rowCount(),
			);
	}

	/**
	 * A released thread: unsubscribe once the shell shows what the stream showed (so reads do
	 * not go back to an older state), or after `lingerMs`. Never in the same turn: listeners
	 * of the change that ended the lease still read the followed state.
	 */
	function maybeRetire(f: Followed): void {
		if (f.leases > 0) return;
		const caughtUp =
			f.failed || !f.view || (shellSeq.get(f.threadId) ?? 0) >= f.lastSeq;
		if (caughtUp && f.lingerShort) return;
		if (f.linger) clearTimeout(f.linger);
		f.lingerShort = caughtUp;
		f.linger = setTimeout(() => close(f), caughtUp ? RETIRE_MS : lingerMs);
	}

	function follow(threadId: string): () => void {
		let f = followed.get(threadId);
		if (!f) {
			if (followed.size >= maxThreads) {
				// Make room from threads nobody holds any more before refusing.
				for (const other of followed.values())
					if (other.leases === 0) {
						close(other);
						break;
					}
			}
			if (followed.size >= maxThreads) {
				fallbacks += 1;
				options.onFallback?.();
				return () => {};
			}
			const resumable = kept.take(keyOf(threadId));
			f = {
				threadId,
				leases: 0,
				stream: null,
				live: false,
				failed: false,
				// A view kept from the last follow: the stream resumes after its sequence.
				view: resumable?.view ?? null,
				complete: resumable?.complete ?? false,
				lastSeq: resumable?.lastSeq ?? 0,
				shellFloor: 0,
				emitted: null,
				linger: undefined,
				lingerShort: false,
				waiters: [],
			};
			followed.set(threadId, f);
		}
		const entry = f;
		entry.leases += 1;
		if (entry.linger) clearTimeout(entry.linger);
		entry.linger = undefined;
		entry.lingerShort = false;
		if (entry.failed && entry.leases === 1) entry.failed = false; // a new lease tries again
		if (inner.status().state === "online") open(entry);
		let released = false;
		return () => {
			if (released) return;
			released = true;
			entry.leases -= 1;
			maybeRetire(entry);
		};
	}

	inner.onChange((change) => {
		switch (change.kind) {
			case "thread": {
				shellSeq.set(change.thread.id, change.sequence);
				const f = followed.get(change.thread.id);
				if (!f) break;
				if (f.leases === 0) maybeRetire(f);
				const thread = overlay(change.thread) ?? change.thread;
				if (thread !== change.thread && f.view) f.emitted = f.view.activity();
				emit({ ...change, thread, previous: overlay(change.previous) });
				return;
			}
			case "thread.removed": {
				shellSeq.delete(change.threadId);
				commandSeq.delete(change.threadId);
				const f = followed.get(change.threadId);
				if (f) close(f, false);
				kept.drop(keyOf(change.threadId));
				break;
			}
			case "synchronized":
				// Back online: resume every followed thread from its cursor.
				for (const f of followed.values()) open(f);
				break;
			default:
				break;
		}
		emit(change);
	});

	const noteWork = (threadId: string) =>
		notifyAll(workListeners, threadId, log, "work");

	return {
		...inner,
		name: inner.name,
		url: inner.url,
		status: () => inner.status(),
		projects: () => inner.projects(),
		threads: () =>
			inner.threads().map((t) => (followed.has(t.id) ? (overlay(t) ?? t) : t)),
		thread: (id) => overlay(inner.thread(id)) ?? followedOnly(id),
		sequence: () => inner.sequence(),
		onChange(listener) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		ready: (timeoutMs) => inner.ready(timeoutMs),
		start: () => inner.start(),
		async stop() {
			for (const f of [...followed.values()]) close(f, false);
			await inner.stop();
		},
		async getThread(threadId, readOptions) {
			let f = followed.get(threadId);
			// A subscription on its way answers about as soon as a GET would: wait for it.
			if (f && !f.live && f.stream && !f.failed) {
				await caughtUp(f, catchUpMs);
				f = followed.get(threadId);
			}
			// Live but behind what the shell or our own command showed: its next frames bring the
			// rest (under load the shell can show an outcome first while the stream's frame waits
			// for our Ack, and a GET then took 100+ ms where the frame came within a few).
			if (
				behindMs > 0 &&
				f?.view &&
				f.live &&
				(f.complete || readOptions?.covers) &&
				f.stream &&
				!current(f)
			) {
				await caughtUp(f, behindMs);
				f = followed.get(threadId);
			}
			if (f?.view && f.live && current(f)) {
				if (f.complete)
					return {
						snapshotSequence: f.lastSeq,
						projection: f.view.projection(),
					};
				const projection = f.view.projection();
				if (readOptions?.covers?.(projection))
					return { snapshotSequence: f.lastSeq, projection };
			}
			return inner.getThread(threadId);
		},
		async dispatch(command) {
			const result = await inner.dispatch(command);
			const threadId = command.threadId;
			if (typeof threadId === "string") {
				// Our own command's rows must be in memory before a read is served from it.
				if (followed.has(threadId))
					commandSeq.set(
						threadId,
						Math.max(commandSeq.get(threadId) ?? 0, result.sequence),
					);
				if (command.type === "message.dispatch") noteWork(threadId);
			}
			return result;
		},
		async launchThread(input) {
			const result = await inner.launchThread(input);
			if (input.initialMessage !== undefined) noteWork(result.threadId);
			return result;
		},
		serverConfig: () => inner.serverConfig(),
		deliveryIntent: () => inner.deliveryIntent?.() ?? Promise.resolve(false),
		openStream,
		follow,
		followStats: () => ({
			followed: followed.size,
			live: [...followed.values()].filter((f) => f.live).length,
			fallbacks,
		}),
		onWorkSent(listener) {
			workListeners.add(listener);
			return () => workListeners.delete(listener);
		},
	};
}
