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
	db.close();
}
