/**
 * The published retry schedule: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then hourly until about
 * three days have passed since the first attempt; each delay gets ±20 % jitter. `Retry-After`
 * from the receiver wins when it asks for longer.
 */

const HOUR_S = 3600;

export const DEFAULT_SCHEDULE_S: number[] = [
	5,
	30,
	120,
	600,
	1800,
	HOUR_S,
	...Array(66).fill(HOUR_S),
];

/** Delay before retry number `attempt` (1 = after the first failure), or null when exhausted. */
export function retryDelayMs(
	schedule: number[],
	attempt: number,
	random: () => number = Math.random,
	retryAfterMs?: number,
): number | null {
	const base = schedule[attempt - 1];
	if (base === undefined) return null;
	const jittered = base * 1000 * (0.8 + 0.4 * random());
	// Whole milliseconds: the outbox stores times as integers.
	return Math.round(Math.max(jittered, retryAfterMs ?? 0));
}

/** `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
	value: string | null,
	now: number,
): number | undefined {
	if (!value) return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds) && seconds >= 0)
		return Math.min(seconds, 6 * HOUR_S) * 1000;
	const date = Date.parse(value);
	if (Number.isNaN(date)) return undefined;
	return Math.min(Math.max(0, date - now), 6 * HOUR_S * 1000);
}
