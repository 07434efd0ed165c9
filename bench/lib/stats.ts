/** Nearest-rank percentiles over a sample list, in the unit the samples came in (ms here). */
export interface Summary {
	n: number;
	p50: number;
	p99: number;
	min: number;
	max: number;
	mean: number;
}

export function percentile(sorted: number[], p: number): number {
	if (sorted.length === 0) return Number.NaN;
	const rank = Math.ceil((p / 100) * sorted.length);
	return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(samples: number[]): Summary {
	const sorted = [...samples].sort((a, b) => a - b);
	const round = (x: number) => Math.round(x * 1000) / 1000;
	return {
		n: sorted.length,
		p50: round(percentile(sorted, 50)),
		p99: round(percentile(sorted, 99)),
		min: round(sorted[0] ?? Number.NaN),
		max: round(sorted.at(-1) ?? Number.NaN),
		mean: round(sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1)),
	};
}

/** "p50 1.2 / p99 3.4 (min 0.9, max 5.0, n 200) ms" */
export function fmtSummary(s: Summary, unit = "ms"): string {
	const f = (x: number) =>
		Number.isNaN(x) ? "-" : x < 10 ? x.toFixed(2) : x.toFixed(1);
	return `p50 ${f(s.p50)} / p99 ${f(s.p99)} (min ${f(s.min)}, max ${f(s.max)}, n ${s.n}) ${unit}`;
}

/** How long `fn` takes, in ms. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
	const t0 = performance.now();
	await fn();
	return performance.now() - t0;
}
