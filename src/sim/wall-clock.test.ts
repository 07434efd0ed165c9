import { describe, expect, it } from "bun:test";
import { wallMs } from "./wall-clock.ts";

describe("wallMs", () => {
	it("reads the system clock with sub-millisecond steps, within a millisecond of Date.now()", () => {
		const fractions = new Set<number>();
		for (let i = 0; i < 1000; i++) {
			const before = Date.now();
			const at = wallMs();
			const after = Date.now();
			expect(at).toBeGreaterThanOrEqual(before - 1);
			expect(at).toBeLessThanOrEqual(after + 2);
			fractions.add(Math.round((at % 1) * 10));
		}
		expect(fractions.size).toBeGreaterThan(1);
	});
});
