/**
 * A bounded thread snapshot (RELEASED-0.1.md §1 "Bounded snapshots"): the latest user turns of
 * a projection, as a newer T3 sends on `subscribeThread` with `acceptBoundedSnapshot`, and
 * `hasMoreHistory` with a `historyCursor` when older turns were left out.
 */

/** User turns in a bounded window (the real server's 10; also 75 items / 1 MiB). */
export const BOUNDED_TURNS = 10;
export const BOUNDED_ITEMS = 75;

type Row = Record<string, unknown>;

export function boundedWindow(projection: Record<string, unknown>): {
	projection: Record<string, unknown>;
	historyCursor: string | null;
	hasMoreHistory: boolean;
	latestLocalTurnOrdinal: number | null;
} {
	const runs = [...((projection.runs as Row[] | undefined) ?? [])].sort(
		(a, b) => (a.ordinal as number) - (b.ordinal as number),
	);
	const latest = runs.at(-1);
	const latestLocalTurnOrdinal =
		typeof latest?.ordinal === "number" ? latest.ordinal : null;
	if (runs.length <= BOUNDED_TURNS)
		return {
			projection,
			historyCursor: null,
			hasMoreHistory: false,
			latestLocalTurnOrdinal,
		};
	const kept = runs.slice(-BOUNDED_TURNS);
	const runIds = new Set(kept.map((r) => r.id));
	const userMessages = new Set(kept.map((r) => r.userMessageId));
	// Rows of a left-out turn go with it; rows of no turn (sessions, scopes) stay.
	const inWindow = (row: Row) =>
		typeof row.runId !== "string" || runIds.has(row.runId);
	const out: Record<string, unknown> = { ...projection, runs: kept };
	for (const [key, value] of Object.entries(projection)) {
		if (key === "runs" || key === "thread" || !Array.isArray(value)) continue;
		if (key === "visibleTurnItems")
			out[key] = (value as Row[]).filter((v) =>
				inWindow((v.item as Row | undefined) ?? {}),
			);
		else if (key === "messages")
			out[key] = (value as Row[]).filter(
				(m) =>
					userMessages.has(m.id) ||
					(typeof m.runId === "string" && runIds.has(m.runId)),
			);
		else out[key] = (value as Row[]).filter(inWindow);
	}
	for (const key of ["turnItems", "visibleTurnItems"])
		if (Array.isArray(out[key]))
			out[key] = (out[key] as Row[]).slice(-BOUNDED_ITEMS);
	return {
		projection: out,
		historyCursor: `turn:${kept[0]?.ordinal as number}`,
		hasMoreHistory: true,
		latestLocalTurnOrdinal,
	};
}
