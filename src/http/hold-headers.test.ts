import { describe, expect, it } from "bun:test";
import { createManualClock } from "../util/clock.ts";
import { holdUntilSettled } from "./hold-headers.ts";

/** Event-loop turns (no time passes): whatever was ready has run by then. */
async function turns(n = 3): Promise<void> {
	for (let i = 0; i < n; i++)
		await new Promise<void>((resolve) => setImmediate(resolve));
}

function deferred() {
	let resolve!: () => void;
	let reject!: (error: Error) => void;
	const promise = new Promise<void>((res, rej) => {
		resolve = res;
		reject = rej;
	});
	return { promise, resolve, reject };
}

describe("holdUntilSettled", () => {
	it("returns the response only once the T3 read has settled", async () => {
		const clock = createManualClock();
		const read = deferred();
		const response = new Response("x");
		let released: Response | undefined;
		void holdUntilSettled(response, read.promise, { clock }).then((r) => {
			released = r;
		});
		await turns();
		expect(released).toBeUndefined();
		read.resolve();
		await turns();
		expect(released).toBe(response);
		expect(clock.pending()).toBe(0);
	});

	it("a failed read releases it too", async () => {
		const read = deferred();
		const held = holdUntilSettled(new Response("x"), read.promise, {
			clock: createManualClock(),
		});
		read.reject(new Error("T3 said no"));
		expect(await held).toBeInstanceOf(Response);
	});

	it("never holds longer than maxMs", async () => {
		const clock = createManualClock();
		const read = deferred();
		let released = false;
		void holdUntilSettled(new Response("x"), read.promise, {
			clock,
			maxMs: 1_000,
		}).then(() => {
			released = true;
		});
		clock.advance(999);
		await turns();
		expect(released).toBe(false);
		clock.advance(1);
		await turns();
		expect(released).toBe(true);
	});
});
