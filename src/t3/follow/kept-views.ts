/**
 * Views of threads no longer followed, kept so the next follow of the same thread resumes after
 * its last sequence instead of taking a snapshot of its history (under load, a thread with a
 * run every few seconds was snapshotted again for each). One budget for the whole process,
 * counted in rows: a view holds its thread's history (or a window of it), so a count of views
 * alone would let long threads on many machines take hundreds of MB. Past the budget the
 * oldest views are first trimmed to what resuming needs (`trim`), then dropped, oldest first:
 * 400 busy threads' windows of ~130 rows each overran it, and each next run took a snapshot.
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

interface Entry<V> {
	view: V;
	rows: number;
	trimmed: boolean;
}

/** `trim` shrinks a view in place to what resuming needs and returns its rows then. */
export function createKeptViews<V>(
	maxRows = KEPT_ROWS,
	maxRowsPerView = KEPT_ROWS_PER_VIEW,
	trim?: (view: V) => number,
): KeptViews<V> {
	const views = new Map<string, Entry<V>>();
	let rows = 0;
	const take = (key: string) => {
		const kept = views.get(key);
		if (!kept) return undefined;
		views.delete(key);
		rows -= kept.rows;
		return kept.view;
	};
	const shrink = (entry: Entry<V>) => {
		if (!trim || entry.trimmed) return;
		rows -= entry.rows;
		entry.rows = trim(entry.view);
		entry.trimmed = true;
		rows += entry.rows;
	};
	return {
		keep(key, view, count) {
			take(key);
			const entry = { view, rows: count, trimmed: false };
			views.set(key, entry);
			rows += count;
			if (count > maxRowsPerView) shrink(entry);
			if (entry.rows > maxRowsPerView) {
				take(key);
				return;
			}
			for (const oldest of views.values()) {
				if (rows <= maxRows) break;
				shrink(oldest);
			}
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
