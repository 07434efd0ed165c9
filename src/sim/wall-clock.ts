/**
 * A wall clock with sub-millisecond precision that every process on the machine agrees on
 * (benchmarks compare a simulator's send time with a receiver's read time in another process).
 * `performance.timeOrigin + performance.now()` alone is not enough: each process fixes its origin
 * once, and a long run's processes were seen to disagree by ~0.2 s; `process.hrtime` is relative
 * to the process start in Bun. So the precise monotonic reading is slaved to `Date.now()` (the
 * system clock, shared, 1 ms steps): anchored once at load, and re-anchored whenever the two
 * drift more than a millisecond apart.
 */

let skew = calibrate();

/** Mean of (precise − Date.now()) over ~2 ms: Date.now() floors, so add back half a step. */
function calibrate(): number {
	let sum = 0;
	let n = 0;
	const end = Date.now() + 2;
	while (Date.now() < end) {
		sum += performance.timeOrigin + performance.now() - Date.now();
		n++;
	}
	return sum / n - 0.5;
}

/** Epoch milliseconds, sub-ms precision, comparable across processes within ~1 ms. */
export function wallMs(): number {
	const precise = performance.timeOrigin + performance.now();
	const coarse = Date.now();
	const at = precise - skew;
	// Date.now() is floor(true time): a good estimate lies in [coarse, coarse + 1).
	if (at < coarse - 1 || at > coarse + 2) {
		skew = precise - coarse - 0.5;
		return coarse + 0.5;
	}
	return at;
}
