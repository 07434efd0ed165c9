/**
 * Time as a dependency: the delivery worker and retry schedule read the clock and set timers
 * only through this, so tests can move time forward instead of sleeping.
 */

export interface Clock {
	now(): number;
	/** Runs `fn` after `ms`; returns a cancel function. */
	setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
	now: () => Date.now(),
	setTimer(fn, ms) {
		const handle = setTimeout(fn, Math.max(0, ms));
		return () => clearTimeout(handle);
	},
};

/** Runs `fn` after `ms` without holding the process open; returns a cancel function. */
export function unrefTimer(fn: () => void, ms: number): () => void {
	const timer = setTimeout(fn, ms);
	timer.unref?.();
	return () => clearTimeout(timer);
}

/** A manual clock for tests: `advance(ms)` fires due timers in order. */
export function createManualClock(start = Date.UTC(2026, 10, 29, 12)): Clock & {
	advance(ms: number): void;
	pending(): number;
} {
	let now = start;
	let seq = 0;
	const timers = new Map<number, { at: number; fn: () => void }>();
	return {
		now: () => now,
		setTimer(fn, ms) {
			const id = ++seq;
			timers.set(id, { at: now + Math.max(0, ms), fn });
			return () => timers.delete(id);
		},
		advance(ms) {
			const target = now + ms;
			for (;;) {
				let next: [number, { at: number; fn: () => void }] | undefined;
				for (const entry of timers)
					if (entry[1].at <= target && (!next || entry[1].at < next[1].at))
						next = entry;
				if (!next) break;
				timers.delete(next[0]);
				now = next[1].at;
				next[1].fn();
			}
			now = target;
		},
		pending: () => timers.size,
	};
}
