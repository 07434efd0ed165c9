/**
 * Keeps a long-running process's JS heap near 1.5× what is live. JavaScriptCore collects the
 * old generation only once it has grown far past what was live: under the bench's 1 000 shell
 * updates/s the heap went 15 → 58 MB between full collections (every ~6 s; rows replaced in
 * followed views are old-generation garbage that young collections never free), and the
 * connector's RSS peaked at 165–190 MB. A full collection once the heap has grown by half of
 * what was live (at least `minGrowthBytes`) keeps it at 16–25 MB there (RSS peak 120 MB, 131
 * when it may grow by all of it), for a collection of the live set every second or two under
 * that load and none while idle; event p99 under that load did not move (5–7 ms).
 */
import { type Clock, systemClock } from "./clock.ts";

export interface HeapPacerOptions {
	/** How often the heap's size is looked at (default 250 ms). */
	everyMs?: number;
	/** Growth that always may happen before a collection (default 8 MB). */
	minGrowthBytes?: number;
}

export interface HeapPacerDeps {
	clock?: Clock;
	heapSize?: () => number;
	/** A full, synchronous collection. */
	collect?: () => void;
}

export function startHeapPacer(
	options: HeapPacerOptions = {},
	deps: HeapPacerDeps = {},
): { stop(): void } {
	const everyMs = options.everyMs ?? 250;
	const minGrowth = options.minGrowthBytes ?? 8 * 2 ** 20;
	const clock = deps.clock ?? systemClock;
	// What is live plus garbage, as bun:jsc heapSize() gives it; reading it walks the heap (~0.5 ms
	// at 100 MB), which every 250 ms costs nothing to speak of.
	const size = deps.heapSize ?? (() => process.memoryUsage().heapUsed);
	const collect = deps.collect ?? (() => Bun.gc(true));
	/** The smallest heap seen since the last collection of ours: about what is live. */
	let floor = size();
	let cancel: (() => void) | undefined;
	const tick = () => {
		const now = size();
		if (now < floor)
			floor = now; // collected on its own
		else if (now - floor > Math.max(minGrowth, floor / 2)) {
			collect();
			floor = size();
		}
		cancel = clock.setTimer(tick, everyMs);
	};
	cancel = clock.setTimer(tick, everyMs);
	return {
		stop() {
			cancel?.();
			cancel = undefined;
		},
	};
}
