import { describe, expect, test } from "bun:test";
import { seededRandom as random } from "../../../test/helpers/seeded-random.ts";
import type { ThreadShell } from "../../t3/model.ts";
import {
	buildListing,
	haystackText,
	SEPARATOR,
	search,
	timeKey,
} from "./thread-index.ts";

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
			"2026-20-01T00:00:00.000Z",
			"2026-12-40T00:00:00.000Z",
			"2026-12-01T30:00:00.000Z",
			"2026-12-01T00:60:00.000Z",
			"2026-12-01T00:00:00.0a0Z",
			"2026-12-01T00:00:00.000z",
			"2026+12-01T00:00:00.000Z",
		])
			expect(timeKey(time)).toBeNaN();
		expect(timeKey("2026-12-01T00:00:00.000Z")).not.toBeNaN();
	});
});

describe("search", () => {
	const shell = (id: string, title: string, text?: string): ThreadShell => ({
		id,
		projectId: "p",
		title,
		latestRunId: null,
		activeRunId: null,
		status: "idle",
		pendingRuntimeRequest: null,
		latestVisibleMessage:
			text === undefined ? null : { id: `m-${id}`, role: "assistant", text },
		updatedAt: `2026-12-01T00:00:0${id}.000Z`,
	});
	const texts = (threads: ThreadShell[]) => {
		const list = buildListing(threads);
		const haystack = search(list);
		return {
			ids: list.threads.map((t) => t.id),
			texts: list.threads.map((_, i) => haystackText(haystack, i)),
			joined: haystack.text,
		};
	};

	test("each thread's title and latest message, lower-cased, in list order", () => {
		expect(
			texts([
				shell("1", "Fix The PARSER", "Done: ÉTÉ"),
				shell("3", "Release"),
				shell("2", "", "ΟΔΟΣ"),
			]),
		).toEqual({
			ids: ["3", "2", "1"],
			texts: ["release\n", "\nοδος", "fix the parser\ndone: été"],
			joined: ["release\n", "\nοδος", "fix the parser\ndone: été"].join(
				SEPARATOR,
			),
		});
	});

	test("a letter that lengthens when lower-cased (U+0130) does not shift the others", () => {
		const { texts: found } = texts([
			shell("1", "after"),
			shell("2", "İSTANBUL", "İİ"),
			shell("3", "before"),
		]);
		expect(found).toEqual([
			"before\n",
			"İSTANBUL\nİİ".toLowerCase(),
			"after\n",
		]);
	});
});
