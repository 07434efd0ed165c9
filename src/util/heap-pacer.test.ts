import { describe, expect, it } from "bun:test";
import { createManualClock } from "./clock.ts";
import { startHeapPacer } from "./heap-pacer.ts";

const MB = 2 ** 20;

function pacer(start: number) {
	const clock = createManualClock();
	const state = { heap: start, live: start, collections: 0 };
	const handle = startHeapPacer(
		{ everyMs: 100, minGrowthBytes: 16 * MB },
		{
			clock,
			heapSize: () => state.heap,
			collect: () => {
				state.collections++;
				state.heap = state.live;
			},
		},
	);
	return { clock, state, handle };
}

describe("heap pacer", () => {
	it("collects once the heap has grown past the minimum growth, then measures from what is left", () => {
		const { clock, state, handle } = pacer(10 * MB);
		state.heap = 26 * MB; // grown 16 MB: not past it yet
		clock.advance(100);
		expect(state.collections).toBe(0);
		state.heap = 27 * MB;
		state.live = 12 * MB;
		clock.advance(100);
		expect(state.collections).toBe(1);
		// Measured from the 12 MB left: 27 MB is within its 16 MB allowance.
		state.heap = 27 * MB;
		clock.advance(100);
		expect(state.collections).toBe(1);
		state.heap = 29 * MB;
		clock.advance(100);
		expect(state.collections).toBe(2);
		handle.stop();
		state.heap = 500 * MB;
		clock.advance(1000);
		expect(state.collections).toBe(2);
		expect(clock.pending()).toBe(0);
	});

	it("lets a large live heap grow by half its own size before collecting", () => {
		const { clock, state, handle } = pacer(100 * MB);
		state.heap = 149 * MB;
		clock.advance(100);
		expect(state.collections).toBe(0);
		state.heap = 151 * MB;
		state.live = 100 * MB;
		clock.advance(100);
		expect(state.collections).toBe(1);
		handle.stop();
	});

	it("follows collections the engine made on its own", () => {
		const { clock, state, handle } = pacer(40 * MB);
		state.heap = 10 * MB; // the engine collected
		clock.advance(100);
		state.heap = 27 * MB; // 17 MB above the new floor
		clock.advance(100);
		expect(state.collections).toBe(1);
		handle.stop();
	});
});
