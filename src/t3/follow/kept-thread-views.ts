/**
 * The views a machine's followed threads leave behind when released, under one budget in bytes
 * (kept-views.ts), so the next follow of the same thread resumes after its last sequence.
 */

import type { FollowedProjection } from "./followed-projection.ts";
import { createKeptViews, type KeptViews } from "./kept-views.ts";

/**
 * What all kept views may hold, and one of them. Counted in bytes, not rows: a row is ~1 KB
 * in T3's captures (so this is the 8 000 rows, 800 a view, it was), but one turn item can hold
 * a tool's whole output, and 8 000 such rows were not 8 MB.
 */
export const KEPT_BYTES = 8 * 2 ** 20;
export const KEPT_BYTES_PER_VIEW = 2 ** 20;

/** A released thread's view and the sequence its stream had reached. */
export interface KeptView {
	view: FollowedProjection;
	lastSeq: number;
	/** False for a bounded window (older rows left out). */
	complete: boolean;
}

/**
 * The views kept after release. Past the budget a view is trimmed to its latest run's rows:
 * enough to resume and to cover the next run, after which it is a window (whole-thread reads GET).
 */
export function createKeptThreadViews(
	maxBytes = KEPT_BYTES,
	maxBytesPerView = KEPT_BYTES_PER_VIEW,
): KeptViews<KeptView> {
	return createKeptViews<KeptView>(maxBytes, maxBytesPerView, (kept) => {
		kept.view.trimToRecent();
		kept.complete = false;
		return kept.view.approxBytes();
	});
}
