/**
 * Small writes gathered into one transaction per event-loop turn. Every commit is FULL (an
 * fsync, ~1 ms and more on a busy disk) and blocks the thread: under load the tracker's outbox
 * rows and the delivery worker's marks came one fsync each, hundreds a second, and every frame
 * arriving meanwhile waited. Each write runs in its own savepoint (one failing does not undo the
 * others) when the turn's batch commits, and its promise settles only after that commit: what it
 * wrote is on disk before anything acts on it.
 */
import type { Db } from "./db.ts";

export interface GroupCommit {
	/**
	 * Runs `write` inside the next batch; resolves with its result once the batch is committed.
	 * `durable: false` marks a write whose loss in a power cut is harmless (a delivery mark: the
	 * event is sent again, which "at least once" allows): a batch of only such writes commits
	 * without an fsync (WAL, synchronous NORMAL: it still survives a crash of the process), and
	 * the next durable commit syncs it too.
	 */
	run<T>(write: () => T, options?: { durable?: boolean }): Promise<T>;
}

interface Pending {
	write: () => unknown;
	durable: boolean;
	resolve: (value: unknown) => void;
	reject: (error: unknown) => void;
}

export function createGroupCommit(
	db: Db,
	/** When the batch commits: after the current turn's I/O callbacks (default setImmediate). */
	defer: (flush: () => void) => void = (flush) => setImmediate(flush),
): GroupCommit {
	let queue: Pending[] = [];

	function flush(): void {
		const batch = queue;
		queue = [];
		const outcomes: (
			| { ok: true; value: unknown }
			| { ok: false; error: unknown }
		)[] = [];
		const relaxed = !batch.some((item) => item.durable);
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
		batch.forEach((item, i) => {
			const outcome = outcomes[i];
			if (outcome?.ok) item.resolve(outcome.value);
			else item.reject(outcome?.error);
		});
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
};
