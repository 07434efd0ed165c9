import { describe, expect, test } from "bun:test";
import { approxBytes } from "./approx-bytes.ts";

describe("approxBytes", () => {
	test("grows with the text a value holds, not with its row count", () => {
		const small = { id: "r1", kind: "tool", output: "ok" };
		const large = { id: "r2", kind: "tool", output: "x".repeat(100_000) };
		expect(approxBytes(large) - approxBytes(small)).toBe(100_000 - 2);
		expect(approxBytes([small, small])).toBe(16 + 2 * (8 + approxBytes(small)));
	});

	test("nested members count; a deep branch counts as one cell", () => {
		const nested = { a: { b: { c: "text" } } };
		expect(approxBytes(nested)).toBe(16 + 8 + 16 + 8 + 16 + 8 + 24 + 4);
		let deep: unknown = "leaf";
		for (let i = 0; i < 40; i += 1) deep = [deep];
		expect(approxBytes(deep)).toBe(32 * (16 + 8) + 16);
		expect(approxBytes(null)).toBe(8);
		expect(approxBytes(42)).toBe(8);
	});
});
