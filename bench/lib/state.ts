/**
 * Pre-tracks threads by writing their rows into the connector's state sqlite before it starts,
 * as if t3_watch had been called on each (same schema, via the product's own store code).
 */
import { openDb } from "../../src/store/db.ts";
import { createThreadStore } from "../../src/store/threads.ts";

export interface TrackedThread {
	threadId: string;
	machine: string;
	projectId: string;
}

export function trackThreads(
	statePath: string,
	threads: TrackedThread[],
): void {
	const db = openDb(statePath);
	const store = createThreadStore(db);
	const now = Date.now();
	db.transaction(() => {
		for (const t of threads)
			store.upsert({
				threadId: t.threadId,
				machine: t.machine,
				projectId: t.projectId,
				title: "bench",
				origin: null,
				watched: true,
				now,
			});
	})();
	// As the connector leaves its file when it stops: the rows in the database, not in a WAL of
	// ~19 MB that the connector's first start would copy back on its event loop (bun:sqlite's
	// close does not checkpoint while the store's prepared statements are alive).
	db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
	db.close();
}
