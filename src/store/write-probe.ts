/**
 * Can the state database still be written? /healthz asks at most every few seconds; a full
 * disk or a read-only volume then shows as a storage error instead of a silent "ok".
 */
import type { Db } from "./db.ts";

const CACHE_MS = 5_000;

export interface WriteProbe {
	/** null when the last write succeeded, else the error text. */
	check(now: number): string | null;
}

export function createWriteProbe(db: Db): WriteProbe {
	let checkedAt = Number.NEGATIVE_INFINITY;
	let last: string | null = null;
	return {
		check(now) {
			if (now - checkedAt < CACHE_MS) return last;
			checkedAt = now;
			try {
				db.query(
					"INSERT OR REPLACE INTO health_probe (id, at) VALUES (1, $at)",
				).run({ at: now });
				last = null;
			} catch (error) {
				last = error instanceof Error ? error.message : String(error);
			}
			return last;
		},
	};
}
