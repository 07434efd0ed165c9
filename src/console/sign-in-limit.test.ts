import { describe, expect, it } from "bun:test";
import { createSignInLimit } from "./sign-in-limit.ts";

describe("createSignInLimit", () => {
	it("refuses an address after max failures in the window, until the oldest leaves it", () => {
		let now = 1_000_000;
		const limit = createSignInLimit(() => now, { max: 3, windowMs: 60_000 });
		for (let i = 0; i < 3; i++) {
			expect(limit.waitMs("a")).toBe(0);
			limit.failed("a");
			now += 1_000;
		}
		expect(limit.waitMs("a")).toBe(57_000);
		// Another address is not held back.
		expect(limit.waitMs("b")).toBe(0);
		now += 57_000;
		expect(limit.waitMs("a")).toBe(0);
	});

	it("a success forgets the address's failures", () => {
		const limit = createSignInLimit(() => 0, { max: 2 });
		limit.failed("a");
		limit.succeeded("a");
		limit.failed("a");
		expect(limit.waitMs("a")).toBe(0);
	});

	it("keeps at most maxAddresses, forgetting the address counted longest ago", () => {
		const limit = createSignInLimit(() => 0, { max: 1, maxAddresses: 2 });
		limit.failed("a");
		limit.failed("b");
		limit.failed("c");
		expect(limit.waitMs("a")).toBe(0);
		expect(limit.waitMs("b")).toBeGreaterThan(0);
		expect(limit.waitMs("c")).toBeGreaterThan(0);
	});
});
