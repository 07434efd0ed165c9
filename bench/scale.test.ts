import { describe, expect, test } from "bun:test";
import { costCurve, type SizeResult } from "./scale.ts";

const page = { n: 1, p50: 2, p99: 2, min: 2, max: 2, mean: 2 };

/** A size whose settled RSS is exactly base + per machine + per thread (in KB), ± noise. */
function size(machines: number, threads: number, noiseKb = 0): SizeResult {
	const kb = 70_000 + 40 * machines + 0.5 * threads + noiseKb;
	return {
		machines,
		threads,
		online: page,
		rssSettledMb: kb / 1024,
		rssAfterCallsMb: 0,
		rssPeakBeforeCallsMb: 0,
		rssPeakMb: 0,
		t3Machines: page,
		first: page,
		query: page,
		next: page,
	};
}

describe("costCurve", () => {
	test("recovers memory per machine and per thread from the sizes and the extra point", () => {
		const sizes = [size(50, 10_000), size(200, 50_000), size(500, 100_000)];
		const extra = [size(500, 10_000)];
		const curve = costCurve(sizes, extra);
		expect(curve.perMachineKb).toBe(40);
		expect(curve.perThreadKb).toBe(0.5);
		expect(curve.baseKb).toBe(70_000);
	});

	test("with the extra point, 2 MB of noise on one size moves the machine figure a little", () => {
		const noisy = [
			size(50, 10_000),
			size(200, 50_000, 2048),
			size(500, 100_000),
		];
		const without = costCurve(noisy);
		const withExtra = costCurve(noisy, [size(500, 10_000)]);
		const miss = (c: { perMachineKb: number | null }) =>
			Math.abs((c.perMachineKb ?? 0) - 40);
		expect(miss(withExtra)).toBeLessThan(miss(without) / 2);
		expect(miss(withExtra)).toBeLessThan(5);
	});
});
