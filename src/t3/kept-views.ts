/**
 * Views of threads no longer followed, kept so the next follow of the same thread resumes after
 * its last sequence instead of taking a snapshot of its whole history (under load, a thread
 * with a run every few seconds was snapshotted again for each). One budget for the whole
 * process, counted in rows: a view holds its thread's full history, so a count of views alone
 * would let long threads on many machines take hundreds of MB. Oldest out first; a view over
 * the per-view share is not kept at all.
 */
export interface KeptViews<V> {
	keep(key: string, view: V, rows: number): void;
	/** The view kept under `key`, removed. */
	take(key: string): V | undefined;
	drop(key: string): void;
	stats(): { views: number; rows: number };
}

export const KEPT_ROWS = 8_000;
export const KEPT_ROWS_PER_VIEW = 800;

export function createKeptViews<V>(
	maxRows = KEPT_ROWS,
	maxRowsPerView = KEPT_ROWS_PER_VIEW,
): KeptViews<V> {
	const views = new Map<string, { view: V; rows: number }>();
	let rows = 0;
	const take = (key: string) => {
		const kept = views.get(key);
		if (!kept) return undefined;
		views.delete(key);
		rows -= kept.rows;
		return kept.view;
	};
	return {
		keep(key, view, count) {
			take(key);
			if (count > maxRowsPerView) return;
			views.set(key, { view, rows: count });
			rows += count;
			for (const oldest of views.keys()) {
				if (rows <= maxRows) break;
				take(oldest);
			}
		},
		take,
		drop: (key) => {
			take(key);
		},
		stats: () => ({ views: views.size, rows }),
	};
}
