/**
 * Small writes gathered into one transaction per event-loop turn, made durable off the event
 * loop. A FULL commit is an fsync (~1 ms, far more on a busy disk) that blocks the thread: under
 * load the tracker's outbox rows and the delivery worker's marks came one fsync each, and the
 * connector spent ~40 % of its time blocked in them while frames waited. Each write runs in its
 * own savepoint (one failing does not undo the others) when the turn's batch commits.
 *
 * With a WAL file to sync (`walSync`), a batch commits without the fsync (synchronous NORMAL:
 * written to the WAL, safe from a crash of the process) and the WAL is then synced on a worker
 * thread (`fdatasync`, what FULL does inside the commit); the writes' promises settle after
 * that. Until then the rows are visible but not on disk: `unsynced()` tells readers that act on
 * them outside (the delivery worker) to wait. Without one (an in-memory database), the commit
 * is FULL as before.
 */
import { closeSync, fdatasync, openSync } from "node:fs";
import type { Db } from "./db.ts";

export interface GroupCommit {
	/**
	 * Runs `write` inside the next batch; resolves with its result once the batch is committed
	 * and on disk. `durable: false` marks a write whose loss in a power cut is harmless (a
	 * delivery mark: the event is sent again, which "at least once" allows): a batch of only such
	 * writes settles once committed, without an fsync (it still survives a crash of the
	 * process), and the next sync covers it too.
	 */
	run<T>(write: () => T, options?: { durable?: boolean }): Promise<T>;
	/**
	 * While committed rows are not on disk yet: resolves once the rows committed so far are
	 * (never rejects), whatever was committed after the call. Undefined when everything
	 * committed is durable.
	 */
	unsynced(): Promise<void> | undefined;
	/** Resolves when no sync is in flight (shutdown, before the file is closed). */
	drained(): Promise<void>;
	/** Stops its checkpoints (shutdown; closing the database checkpoints it). */
	close?(): void;
}

/** How often, at most, the WAL is checkpointed after a sync; and at least (other writers). */
const CHECKPOINT_AFTER_SYNC_MS = 1_000;
const CHECKPOINT_EVERY_MS = 5_000;

const SYNC_RETRY_MS = 1_000;

interface Pending {
	write: () => unknown;
	durable: boolean;
	resolve: (value: unknown) => void;
	reject: (error: unknown) => void;
}

export interface WalSync {
	/** fdatasync of the WAL file on a worker thread. */
	sync(): Promise<void>;
	close(): void;
}

/** Syncs the WAL file of `db` on a worker thread; undefined when it has none (in memory). */
export function walSync(db: Db): WalSync | undefined {
	const file = db.filename;
	if (!file || file === ":memory:") return undefined;
	const mode = db.query("PRAGMA journal_mode").get() as {
		journal_mode?: string;
	} | null;
	if (mode?.journal_mode !== "wal") return undefined;
	let fd: number;
	try {
		// The WAL exists while the connection is open (its first read opened it); fdatasync on
		// any descriptor flushes the file's data.
		fd = openSync(`${file}-wal`, "r+");
	} catch {
		return undefined;
	}
	let closed = false;
	return {
		sync: () =>
			closed
				? Promise.resolve() // closing the database checkpoints and syncs it
				: new Promise<void>((resolve, reject) =>
						fdatasync(fd, (error) => (error ? reject(error) : resolve())),
					),
		close: () => {
			if (closed) return;
			closed = true;
			closeSync(fd);
		},
	};
}

export function createGroupCommit(
	db: Db,
	/** When the batch commits: after the current turn's I/O callbacks (default setImmediate). */
	defer: (flush: () => void) => void = (flush) => setImmediate(flush),
	/** Makes committed WAL frames durable off the event loop (see walSync); else FULL commits. */
	wal?: WalSync,
): GroupCommit {
	let queue: Pending[] = [];
	/** Syncs in flight, and what waits for all of them to end. */
	let syncing = 0;
	const inFlight = new Set<Promise<void>>();
	let syncSeq = 0;
	/** A sync failed: what it covered is on disk only once a sync started after it succeeds. */
	let failedSeq = 0;
	let synced: Promise<void> | undefined;
	let wakeSynced: (() => void) | undefined;

	// With a WAL synced off the loop, checkpoints move out of the commits too: sqlite's automatic
	// one ran inside the commit that crossed 1 000 pages (two fsyncs and the page copy, 4–23 ms
	// here, far more on a slow disk), delaying the outcomes of that batch and the turn. Now it
	// runs after a sync has settled its writes, so their events are on their way first.
	let lastCheckpoint = Number.NEGATIVE_INFINITY;
	let checkpointQueued = false;
	let backstop: ReturnType<typeof setInterval> | undefined;
	const checkpoint = () => {
		checkpointQueued = false;
		lastCheckpoint = performance.now();
		try {
			db.exec("PRAGMA wal_checkpoint(PASSIVE)");
		} catch {
			// Busy or a failing disk: the next one tries again; the WAL only grows meanwhile.
		}
	};
	const checkpointSoon = () => {
		if (checkpointQueued) return;
		if (performance.now() - lastCheckpoint < CHECKPOINT_AFTER_SYNC_MS) return;
		checkpointQueued = true;
		setTimeout(checkpoint, 0).unref?.();
	};
	if (wal) {
		db.exec("PRAGMA wal_autocheckpoint = 0");
		// Writes outside the batches (dispatch records) are checkpointed too.
		backstop = setInterval(checkpoint, CHECKPOINT_EVERY_MS);
		backstop.unref?.();
	}

	function flush(): void {
		const batch = queue;
		queue = [];
		const outcomes: (
			| { ok: true; value: unknown }
			| { ok: false; error: unknown }
		)[] = [];
		const durable = batch.some((item) => item.durable);
		const offThread = durable && wal !== undefined;
		const relaxed = !durable || offThread;
		if (relaxed) db.exec("PRAGMA synchronous = NORMAL");
		try {
			db.transaction(() => {
				for (const item of batch) {
					try {
						outcomes.push({ ok: true, value: db.transaction(item.write)() });
					} catch (error) {
						outcomes.push({ ok: false, error });
					}
				}
			})();
		} catch (error) {
			// The commit itself failed (a full disk): nothing of the batch was written.
			for (const item of batch) item.reject(error);
			return;
		} finally {
			if (relaxed) db.exec("PRAGMA synchronous = FULL");
		}
		const settle = () =>
			batch.forEach((item, i) => {
				const outcome = outcomes[i];
				if (outcome?.ok) item.resolve(outcome.value);
				else item.reject(outcome?.error);
			});
		if (!offThread || !wal) {
			settle();
			return;
		}
		startSync(settle, (error) => {
			for (const item of batch) item.reject(error);
		});
	}

	/** One fdatasync of the WAL; after a failure, tried again until one succeeds. */
	function startSync(
		onSynced: () => void,
		onFailed: (error: unknown) => void,
	): void {
		if (!wal) return;
		const seq = ++syncSeq;
		syncing += 1;
		synced ??= new Promise<void>((resolve) => {
			wakeSynced = resolve;
		});
		const done: Promise<void> = wal
			.sync()
			.then(
				() => {
					if (seq > failedSeq) failedSeq = 0;
					onSynced();
					checkpointSoon();
				},
				(error: unknown) => {
					// Not known to be on disk: the writers hear it, and what was committed stays
					// unsynced (not delivered) until a sync started after this one succeeds.
					failedSeq = Math.max(failedSeq, seq);
					onFailed(error);
					const retry = setTimeout(
						() =>
							startSync(
								() => {},
								() => {},
							),
						SYNC_RETRY_MS,
					);
					retry.unref?.();
				},
			)
			.finally(() => {
				inFlight.delete(done);
				syncing -= 1;
				if (syncing > 0 || failedSeq > 0) return;
				const wake = wakeSynced;
				synced = undefined;
				wakeSynced = undefined;
				wake?.();
			});
		inFlight.add(done);
	}

	return {
		run<T>(write: () => T, options?: { durable?: boolean }): Promise<T> {
			return new Promise<T>((resolve, reject) => {
				if (queue.length === 0) defer(flush);
				queue.push({
					write,
					durable: options?.durable ?? true,
					resolve: resolve as (value: unknown) => void,
					reject,
				});
			});
		},
		unsynced() {
			// After a failed sync, only a later successful one makes its rows durable.
			if (failedSeq > 0) return synced;
			if (inFlight.size === 0) return undefined;
			// Every durable batch starts its sync as it commits, so the syncs in flight now cover
			// every row committed so far. Waiting for no sync to be in flight instead starved the
			// delivery worker under load: with an fsync slower than the gap between outcomes
			// (a busy or fresh disk), a new sync started before the last ended, for 100s of ms.
			return Promise.all([...inFlight]).then(() =>
				failedSeq > 0 ? synced : undefined,
			);
		},
		drained: async () => {
			while (inFlight.size > 0) await Promise.all([...inFlight]);
		},
		close() {
			if (backstop) clearInterval(backstop);
			backstop = undefined;
		},
	};
}

/** Each write at once, as it is (callers without a shared batch, and tests). */
export const immediateCommit: GroupCommit = {
	run: <T>(write: () => T) => {
		try {
			return Promise.resolve(write());
		} catch (error) {
			return Promise.reject(error);
		}
	},
	unsynced: () => undefined,
	drained: async () => {},
};
