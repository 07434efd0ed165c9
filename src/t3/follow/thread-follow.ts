/**
 * Room `t3/follow/`: threads followed on their own stream while someone needs them, their
 * projections kept current, views kept after release, and the machine's shell mirror. May import
 * `t3/decode`, `t3/derive` and `util/`.
 */
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
import type { Machine, ShellChange } from "../machine-api.ts";
import type { ThreadShell } from "../model.ts";
import { type Activity, sameActivity } from "./followed-projection.ts";
import {
	createFollowedThreads,
	noteShellSequence,
} from "./followed-threads.ts";
import { createKeptThreadViews, type KeptView } from "./kept-thread-views.ts";
import type { KeptViews } from "./kept-views.ts";

export { createKeptThreadViews, type KeptView } from "./kept-thread-views.ts";

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

export const DEFAULT_MAX_FOLLOWED = 256;

export function followThreads(inner: Machine, options: FollowOptions): Machine {
	if (!inner.openStream) return inner;
	const openStream = inner.openStream.bind(inner);
	const log = options.log.child({ machine: inner.name });
	const maxThreads = options.maxThreads ?? DEFAULT_MAX_FOLLOWED;
	const lingerMs = options.lingerMs ?? 2_000;
	const catchUpMs = options.catchUpMs ?? 2_000;
	const behindMs = options.behindMs ?? 250;
	/** Views of threads no longer followed, under a budget in bytes (kept-views.ts). */
	const kept = options.keptViews ?? createKeptThreadViews();
	const {
		followed,
		commandSeq,
		current,
		open,
		caughtUp,
		close,
		maybeRetire,
		follow,
		forget,
		fallbacks,
	} = createFollowedThreads({
		name: inner.name,
		openStream,
		shell: (threadId) => inner.thread(threadId),
		online: () => inner.status().state === "online",
		log,
		maxThreads,
		lingerMs,
		kept,
		onFallback: () => options.onFallback?.(),
		onActivity: markDirty,
	});
	const listeners = new Set<(change: ShellChange) => void>();
	const workListeners = new Set<(threadId: string) => void>();
	const dirty = new Set<string>();
	let flushQueued = false;

	function emit(change: ShellChange): void {
		notifyAll(listeners, change, log, "shell change");
	}

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

	inner.onChange((change) => {
		switch (change.kind) {
			case "thread": {
				noteShellSequence(change.thread, change.sequence);
				const f = followed.get(change.thread.id);
				if (!f) break;
				if (f.leases === 0) maybeRetire(f);
				const thread = overlay(change.thread) ?? change.thread;
				if (thread !== change.thread && f.view) f.emitted = f.view.activity();
				emit({ ...change, thread, previous: overlay(change.previous) });
				return;
			}
			case "thread.removed":
				forget(change.threadId);
				break;
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
		settled: (timeoutMs) => inner.settled(timeoutMs),
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
		followedMessage(threadId) {
			const f = followed.get(threadId);
			return f?.view && f.live ? f.view.latestMessage() : null;
		},
		followedProjection(threadId) {
			const f = followed.get(threadId);
			return f?.view && f.live ? f.view.projection() : null;
		},
		openStream,
		follow,
		followStats: () => ({
			followed: followed.size,
			live: [...followed.values()].filter((f) => f.live).length,
			fallbacks: fallbacks(),
		}),
		onWorkSent(listener) {
			workListeners.add(listener);
			return () => workListeners.delete(listener);
		},
	};
}
