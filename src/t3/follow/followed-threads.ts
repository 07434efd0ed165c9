/**
 * The threads a machine follows on their own `subscribeThread` stream (PROTOCOL.md §8.3): leases,
 * opening and resuming each stream, applying its items, and retiring a released thread into the
 * kept views. thread-follow.ts serves reads and changes from what this keeps.
 */

import type { Logger } from "../../util/log.ts";
import { decodeThreadStreamItem } from "../decode/thread-stream.ts";
import type { Machine } from "../machine-api.ts";
import type { ThreadShell } from "../model.ts";
import {
	type Activity,
	createFollowedProjection,
	type FollowedProjection,
} from "./followed-projection.ts";
import type { KeptView } from "./kept-thread-views.ts";
import type { KeptViews } from "./kept-views.ts";

export interface FollowedThreadsDeps {
	/** The machine's name: kept views are shared by every machine. */
	name: string;
	openStream: NonNullable<Machine["openStream"]>;
	/** The machine's held shell of a thread (stamped by `noteShellSequence` when it arrived). */
	shell: (threadId: string) => ThreadShell | undefined;
	online: () => boolean;
	log: Logger;
	maxThreads: number;
	lingerMs: number;
	kept: KeptViews<KeptView>;
	/** A thread could not be followed (bound reached or its stream could not resume). */
	onFallback: () => void;
	/** A followed thread's view took an item (each one: the caller coalesces its emits). */
	onActivity: (threadId: string) => void;
}

/** One followed thread: its leases, its stream and the view it keeps current. */
export interface Followed {
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

/** How long a released, caught-up thread stays subscribed (a follow-up often comes at once). */
const RETIRE_MS = 100;

/**
 * The sequence of the shell change that brought a held shell, kept on the shell itself: a map
 * of every thread's sequence was ~50 bytes a thread (5 MB with 100 000 threads held), and only
 * followed threads ever read it. A symbol key: no JSON, key list or listing shows it.
 */
const SHELL_SEQUENCE = Symbol("shell sequence");
type Stamped = ThreadShell & { [SHELL_SEQUENCE]?: number };

/** Stamps a held shell with the sequence of the change that brought it. */
export function noteShellSequence(thread: ThreadShell, sequence: number): void {
	(thread as Stamped)[SHELL_SEQUENCE] = sequence;
}

const shellSequence = (thread: ThreadShell | undefined): number =>
	(thread as Stamped | undefined)?.[SHELL_SEQUENCE] ?? 0;

export function createFollowedThreads(deps: FollowedThreadsDeps) {
	const { openStream, log, maxThreads, lingerMs, kept } = deps;
	const followed = new Map<string, Followed>();
	const keyOf = (threadId: string) => `${deps.name}\u0000${threadId}`;
	/** The sequence of our latest command per thread (the shell's is on its shell). */
	const commandSeq = new Map<string, number>();
	const shellSeq = (threadId: string) => shellSequence(deps.shell(threadId));
	let fallbacks = 0;

	/** Followed rows are at least as new as everything the shell and our commands showed. */
	const current = (f: Followed) => {
		if (f.view === null || f.failed) return false;
		const shown = shellSeq(f.threadId);
		return (
			(f.lastSeq >= shown || shown <= f.shellFloor) &&
			f.lastSeq >= (commandSeq.get(f.threadId) ?? 0)
		);
	};

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
				deps.onFallback();
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
				f.shellFloor = shellSeq(f.threadId);
				wakeWaiters(f);
				break;
			default:
				return;
		}
		deps.onActivity(f.threadId);
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
				f.view.approxBytes(),
			);
	}

	/**
	 * A released thread: unsubscribe once the shell shows what the stream showed (so reads do
	 * not go back to an older state), or after `lingerMs`. Never in the same turn: listeners
	 * of the change that ended the lease still read the followed state.
	 */
	function maybeRetire(f: Followed): void {
		if (f.leases > 0) return;
		const caughtUp = f.failed || !f.view || shellSeq(f.threadId) >= f.lastSeq;
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
				deps.onFallback();
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
		if (deps.online()) open(entry);
		let released = false;
		return () => {
			if (released) return;
			released = true;
			entry.leases -= 1;
			maybeRetire(entry);
		};
	}

	/** A thread gone from the machine: unfollowed, its kept view and command sequence dropped. */
	function forget(threadId: string): void {
		commandSeq.delete(threadId);
		const f = followed.get(threadId);
		if (f) close(f, false);
		kept.drop(keyOf(threadId));
	}

	return {
		followed,
		commandSeq,
		current,
		open,
		caughtUp,
		close,
		maybeRetire,
		follow,
		forget,
		fallbacks: () => fallbacks,
	};
}
