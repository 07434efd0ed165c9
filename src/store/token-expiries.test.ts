import { describe, expect, it } from "bun:test";
import { tempStates } from "../../test/helpers/temp-state.ts";
import { createTokenExpiryStore } from "./token-expiries.ts";

const tempState = tempStates("token-expiries");

function setup(onError?: (error: unknown) => void) {
	const { db, reader } = tempState();
	const timers: (() => void)[] = [];
	const store = createTokenExpiryStore(db, {
		setTimer: (fn) => {
			timers.push(fn);
			return () => timers.splice(timers.indexOf(fn), 1);
		},
		...(onError ? { onError } : {}),
	});
	// Another connection sees only what is committed.
	const stored = () =>
		reader
			.query("SELECT machine, expires_at FROM token_expiries ORDER BY machine")
			.all();
	return { db, store, timers, stored };
}

describe("token expiries", () => {
	it("a fleet's expiries are written together, once the batch's time is up", () => {
		const { store, timers, stored } = setup();
		for (let i = 0; i < 50; i += 1)
			store.set(`m${i}`, `token-${i}`, "2027-01-01T00:00:00.000Z");
		// Waiting, but already what `get` answers; one timer for the whole batch.
		expect(stored()).toEqual([]);
		expect(timers).toHaveLength(1);
		expect(store.get("m7", "token-7")).toBe("2027-01-01T00:00:00.000Z");
		expect(store.get("m7", "token-8")).toBeNull();
		timers[0]?.();
		expect(stored()).toHaveLength(50);
		expect(timers).toHaveLength(0);
	});

	it("an unchanged expiry writes nothing; a new token, a new expiry or none do", () => {
		const { store, timers, stored } = setup();
		store.set("a", "t1", "2027-01-01T00:00:00.000Z");
		store.flush();
		store.set("a", "t1", "2027-01-01T00:00:00.000Z");
		expect(timers).toHaveLength(0);
		store.set("a", "t2", "2027-01-01T00:00:00.000Z");
		expect(store.get("a", "t1")).toBeNull();
		expect(store.get("a", "t2")).toBe("2027-01-01T00:00:00.000Z");
		store.set("a", "t2", null);
		expect(store.get("a", "t2")).toBeNull();
		expect(stored()).toHaveLength(1);
		store.flush();
		expect(stored()).toEqual([]);
		// Nothing recorded and none reported: nothing to do.
		store.set("b", "t", null);
		expect(timers).toHaveLength(0);
	});

	it("flush writes what waits (shutdown), and survives a reopen", () => {
		const { db, store, stored } = setup();
		store.set("a", "t1", "2027-02-01T00:00:00.000Z");
		store.flush();
		expect(stored()).toEqual([
			{ machine: "a", expires_at: "2027-02-01T00:00:00.000Z" },
		]);
		const again = createTokenExpiryStore(db);
		expect(again.get("a", "t1")).toBe("2027-02-01T00:00:00.000Z");
	});

	it("a batch that cannot be written is reported, not thrown from a timer", () => {
		const errors: unknown[] = [];
		const { db, store, timers } = setup((error) => errors.push(error));
		store.set("a", "t1", "2027-02-01T00:00:00.000Z");
		db.exec("DROP TABLE token_expiries");
		expect(() => timers[0]?.()).not.toThrow();
		expect(errors).toHaveLength(1);
	});
});
