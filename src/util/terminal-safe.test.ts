import { describe, expect, test } from "bun:test";
import { terminalSafe } from "./terminal-safe.ts";

describe("terminalSafe", () => {
	test("plain text passes unchanged", () => {
		expect(terminalSafe("t_0123-abc")).toBe("t_0123-abc");
		expect(terminalSafe("café ✓ 日本")).toBe("café ✓ 日本");
		expect(terminalSafe("")).toBe("");
	});

	test("controls, DEL and C1 are escaped", () => {
		expect(terminalSafe("a\nb\rc\td")).toBe("a\\nb\\rc\\td");
		expect(terminalSafe("\u001b[31mred\u001b[0m")).toBe(
			"\\u001b[31mred\\u001b[0m",
		);
		expect(terminalSafe("\u0000\u0007\u007f\u0085\u009b")).toBe(
			"\\u0000\\u0007\\u007f\\u0085\\u009b",
		);
	});

	test("bidi, zero-width, separators, tags and lone surrogates are escaped", () => {
		const cases: [string, string][] = [
			["\u200e", "\\u200e"],
			["\u200f", "\\u200f"],
			["\u202a", "\\u202a"],
			["\u202e", "\\u202e"],
			["\u2066", "\\u2066"],
			["\u2069", "\\u2069"],
			["\u061c", "\\u061c"],
			["\u200b", "\\u200b"],
			["\ufeff", "\\ufeff"],
			["\u2028", "\\u2028"],
			["\u2029", "\\u2029"],
			["\u{e0041}", "\\u{e0041}"],
			["\ud800", "\\ud800"],
		];
		for (const [raw, escaped] of cases)
			expect(terminalSafe(`x${raw}y`), escaped).toBe(`x${escaped}y`);
	});

	test("a backslash is doubled, so an escape in the text reads back apart from a real one", () => {
		expect(terminalSafe("\\n")).toBe("\\\\n");
		expect(terminalSafe("\\n")).not.toBe(terminalSafe("\n"));
	});

	test("nothing printable to a terminal survives as a control or bidi character", () => {
		let all = "";
		for (let c = 0; c < 0x3000; c++) all += String.fromCharCode(c);
		const out = terminalSafe(all);
		expect(out).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
	});

	test("a long value is cut to the width, ending in …, never inside an escape", () => {
		const key = "k".repeat(10_000);
		const cut = terminalSafe(key, 40);
		expect([...cut].length).toBe(40);
		expect(cut).toBe(`${"k".repeat(39)}…`);
		expect(terminalSafe("k".repeat(40), 40)).toBe("k".repeat(40));
		const escapes = terminalSafe(`${"a".repeat(36)}\u202ebbbb`, 40);
		expect(escapes).toBe(`${"a".repeat(36)}…`);
		expect(terminalSafe(`ab\u001b`, 8)).toBe("ab\\u001b");
		expect(terminalSafe(`ab\u001bc`, 8)).toBe("ab…");
	});

	test("width counts code points, not UTF-16 units", () => {
		expect(terminalSafe("😀".repeat(5), 5)).toBe("😀".repeat(5));
		expect(terminalSafe("😀".repeat(6), 5)).toBe(`${"😀".repeat(4)}…`);
	});
});
