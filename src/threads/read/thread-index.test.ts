import { describe, expect, test } from "bun:test";
import { seededRandom as random } from "../../../test/helpers/seeded-random.ts";
import { timeKey } from "./thread-index.ts";

describe("timeKey", () => {
	test("orders T3's fixed-width times exactly as their texts, whatever the digits", () => {
		const next = random(27);
		const digits = (n: number, max: number) =>
			String(Math.floor(next() * (max + 1))).padStart(n, "0");
		const times = Array.from(
			{ length: 3000 },
			() =>
				// Out-of-calendar days and hours included: the text's order is what counts.
				`${digits(4, 9999)}-${digits(2, 19)}-${digits(2, 39)}T${digits(2, 29)}:${digits(2, 59)}:${digits(2, 59)}.${digits(3, 999)}Z`,
		);
		for (let i = 1; i < times.length; i += 1) {
			const a = times[i - 1] as string;
			const b = times[i] as string;
			expect(Math.sign(timeKey(a) - timeKey(b))).toBe(
				a < b ? -1 : a > b ? 1 : 0,
			);
		}
	});

	test("any other form has no key (compared as text)", () => {
		for (const time of [
			"",
			"2026-12-01T00:00:00Z",
			"2026-12-01T00:00:00.5+00:00",
			"2026-12-01T00:00:60.000Z",
			"2026-12-01 00:00:00.000Z",
			"２026-12-01T00:00:00.000Z",
		])
			expect(timeKey(time)).toBeNaN();
		expect(timeKey("2026-12-01T00:00:00.000Z")).not.toBeNaN();
	});
});
