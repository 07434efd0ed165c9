/**
 * The views a machine's followed threads leave behind when released, under one row budget
 * (kept-views.ts), so the next follow of the same thread resumes after its last sequence.
 */

import type { FollowedProjection } from "./followed-projection.ts";
import {
	createKeptViews,
	KEPT_ROWS,
	KEPT_ROWS_PER_VIEW,
	type KeptViews,
} from "./kept-views.ts";

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
	maxRows = KEPT_ROWS,
	maxRowsPerView = KEPT_ROWS_PER_VIEW,
): KeptViews<KeptView> {
	return createKeptViews<KeptView>(maxRows, maxRowsPerView, (kept) => {
		kept.view.trimToRecent();
		kept.complete = false;
		return kept.view.rowCount();
	});
}
