/**
 * Views of threads no longer followed, kept so the next follow of the same thread resumes after
 * its last sequence instead of taking a snapshot of its history (under load, a thread with a
 * run every few seconds was snapshotted again for each). One budget for the whole process, in
 * what each view costs (its size, as the caller measures it: bytes for thread views): a view
 * holds its thread's history (or a window of it), so a count of views alone would let long
 * threads on many machines take hundreds of MB. Past the budget the oldest views are first
 * trimmed to what resuming needs (`trim`), then dropped, oldest first: 400 busy threads'
 * windows overran it, and each next run took a snapshot.
 */
export interface KeptViews<V> {
	keep(key: string, view: V, size: number): void;
	/** The view kept under `key`, removed. */
	take(key: string): V | undefined;
	drop(key: string): void;
	stats(): { views: number; size: number };
}

interface Entry<V> {
	view: V;
	size: number;
	trimmed: boolean;
}

/** `trim` shrinks a view in place to what resuming needs and returns its size then. */
export function createKeptViews<V>(
	maxSize: number,
	maxSizePerView: number,
	trim?: (view: V) => number,
): KeptViews<V> {
	const views = new Map<string, Entry<V>>();
	let size = 0;
	const take = (key: string) => {
		const kept = views.get(key);
		if (!kept) return undefined;
		views.delete(key);
		size -= kept.size;
		return kept.view;
	};
	const shrink = (entry: Entry<V>) => {
		if (!trim || entry.trimmed) return;
		size -= entry.size;
		entry.size = trim(entry.view);
		entry.trimmed = true;
		size += entry.size;
	};
	return {
		keep(key, view, cost) {
			take(key);
			const entry = { view, size: cost, trimmed: false };
			views.set(key, entry);
			size += cost;
			if (cost > maxSizePerView) shrink(entry);
			if (entry.size > maxSizePerView) {
				take(key);
				return;
			}
			for (const oldest of views.values()) {
				if (size <= maxSize) break;
				shrink(oldest);
			}
			for (const oldest of views.keys()) {
				if (size <= maxSize) break;
				take(oldest);
			}
		},
		take,
		drop: (key) => {
			take(key);
		},
		stats: () => ({ views: views.size, size }),
	};
}
