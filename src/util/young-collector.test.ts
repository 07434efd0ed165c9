import { describe, expect, it } from "bun:test";
import { createYoungCollector } from "./young-collector.ts";

const MB = 2 ** 20;

function collector() {
	const state = {
		rss: 100 * MB,
		afterCollect: 100 * MB,
		collections: 0,
		reads: 0,
	};
	const queued: (() => void)[] = [];
	const clock = { ms: 0 };
	const young = createYoungCollector({
		now: () => clock.ms,
		minIntervalMs: 50,
		growthBytes: 16 * MB,
		residentSize: () => {
			state.reads += 1;
			return state.rss;
		},
		collectYoung: () => {
			state.collections += 1;
			state.rss = state.afterCollect;
		},
		later: (fn) => queued.push(fn),
	});
	/** The requests of one task, then the next task, 50 ms after the last. */
	const requests = (count: number) => {
		clock.ms += 50;
		for (let i = 0; i < count; i++) young.noteRequest();
		for (const fn of queued.splice(0)) fn();
	};
	return { state, young, queued, requests, clock };
}

describe("young collector", () => {
	it("collects once resident memory grew past the allowance, then measures from what is left", () => {
		const { state, requests } = collector();
		requests(1); // the first look sets the floor: 100 MB
		state.rss = 116 * MB; // grown by exactly the allowance: not past it
		requests(1);
		expect(state.collections).toBe(0);
		state.rss = 117 * MB;
		state.afterCollect = 110 * MB;
		requests(1);
		expect(state.collections).toBe(1);
		// Measured from the 110 MB left: 120 MB is within the allowance.
		state.rss = 120 * MB;
		requests(1);
		expect(state.collections).toBe(1);
		state.rss = 127 * MB;
		requests(1);
		expect(state.collections).toBe(2);
	});

	it("looks in the next task, once for all the requests of one task", () => {
		const { state, young, queued, requests, clock } = collector();
		requests(1);
		const reads = state.reads;
		state.rss = 200 * MB;
		clock.ms += 50;
		young.noteRequest();
		young.noteRequest();
		young.noteRequest();
		expect(state.reads).toBe(reads); // nothing read on the requests' own path
		expect(queued).toHaveLength(1);
		requests(0);
		expect(state.reads).toBe(reads + 2); // the look, and the floor after the collection
		expect(state.collections).toBe(1);
	});

	it("looks at most every minIntervalMs", () => {
		const { state, young, queued, requests, clock } = collector();
		requests(1);
		const reads = state.reads;
		state.rss = 200 * MB;
		clock.ms += 49;
		young.noteRequest();
		expect(queued).toHaveLength(0); // 49 ms after the last look
		clock.ms += 1;
		young.noteRequest();
		expect(queued).toHaveLength(1);
		for (const fn of queued.splice(0)) fn();
		expect(state.reads).toBeGreaterThan(reads);
		expect(state.collections).toBe(1);
	});

	it("follows memory the process gave back on its own", () => {
		const { state, requests } = collector();
		requests(1);
		state.rss = 90 * MB;
		requests(1);
		state.rss = 107 * MB; // 17 MB above the new floor
		requests(1);
		expect(state.collections).toBe(1);
	});
});
