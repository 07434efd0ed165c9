import { describe, expect, it } from "bun:test";
import { createManualClock } from "./clock.ts";
import { requestDeadline } from "./request-deadline.ts";

describe("requestDeadline", () => {
	it("aborts with a TimeoutError once the time is up", () => {
		const clock = createManualClock();
		const deadline = requestDeadline(15_000, clock);
		clock.advance(14_999);
		expect(deadline.signal.aborted).toBe(false);
		clock.advance(1);
		expect(deadline.signal.aborted).toBe(true);
		expect((deadline.signal.reason as Error).name).toBe("TimeoutError");
	});

	it("leaves no timer behind once the request is done", () => {
		const clock = createManualClock();
		const deadline = requestDeadline(15_000, clock);
		expect(clock.pending()).toBe(1);
		deadline.done();
		expect(clock.pending()).toBe(0);
		clock.advance(60_000);
		expect(deadline.signal.aborted).toBe(false);
	});
});
