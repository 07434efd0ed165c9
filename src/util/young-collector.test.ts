import { describe, expect, it } from "bun:test";
import { createYoungCollector } from "./young-collector.ts";

const MB = 2 ** 20;

function collector() {
	const state = { rss: 100 * MB, afterCollect: 100 * MB, collections: 0 };
	const queued: (() => void)[] = [];
	const young = createYoungCollector({
		growthBytes: 16 * MB,
		residentSize: () => state.rss,
		collectYoung: () => {
			state.collections += 1;
			state.rss = state.afterCollect;
		},
		later: (fn) => queued.push(fn),
	});
	const runQueued = () => {
		for (const fn of queued.splice(0)) fn();
	};
	return { state, young, queued, runQueued };
}

describe("young collector", () => {
	it("collects in the next task once resident memory grew past the allowance, then measures from what is left", () => {
		const { state, young, queued, runQueued } = collector();
		young.noteRequest(); // the first request sets the floor: 100 MB
		state.rss = 116 * MB; // grown by exactly the allowance: not past it
		young.noteRequest();
		expect(queued).toHaveLength(0);
		state.rss = 117 * MB;
		young.noteRequest();
		young.noteRequest(); // one collection queued, not two
		expect(queued).toHaveLength(1);
		expect(state.collections).toBe(0); // not inside the request's own task
		state.afterCollect = 110 * MB;
		runQueued();
		expect(state.collections).toBe(1);
		// Measured from the 110 MB left: 120 MB is within the allowance.
		state.rss = 120 * MB;
		young.noteRequest();
		expect(queued).toHaveLength(0);
		state.rss = 127 * MB;
		young.noteRequest();
		expect(queued).toHaveLength(1);
	});

	it("follows memory the process gave back on its own", () => {
		const { state, young, queued } = collector();
		young.noteRequest();
		state.rss = 90 * MB;
		young.noteRequest();
		state.rss = 107 * MB; // 17 MB above the new floor
		young.noteRequest();
		expect(queued).toHaveLength(1);
	});
});
