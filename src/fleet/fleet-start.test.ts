import { describe, expect, it } from "bun:test";
import { fakeMachineConfig } from "../../test/helpers/fake-machine.ts";
import type { Machine } from "../t3/machine-api.ts";
import { createFleet } from "./fleet.ts";

/** Machines that count starts and settle only when the test says so. */
function machines(count: number) {
	const started: string[] = [];
	const settle = new Map<string, () => void>();
	const fleet = createFleet(
		Array.from({ length: count }, (_, i) => fakeMachineConfig(`m${i}`)),
		(c) =>
			({
				name: c.name,
				url: c.url,
				start: () => started.push(c.name),
				settled: () =>
					new Promise<void>((resolve) => settle.set(c.name, resolve)),
				stop: async () => {},
			}) as unknown as Machine,
	);
	return { fleet, started, settle };
}

const turn = () => new Promise<void>((r) => queueMicrotask(r));

describe("fleet start", () => {
	it("connects a bounded number of machines at once and starts the next as each settles", async () => {
		const { fleet, started, settle } = machines(100);
		fleet.start();
		expect(started.length).toBe(32);
		settle.get("m0")?.();
		settle.get("m5")?.();
		await turn();
		await turn();
		expect(started.length).toBe(34);
		expect(started.slice(32)).toEqual(["m32", "m33"]);
		for (let i = 1; i < 100; i++) {
			settle.get(`m${i}`)?.();
			await turn();
			await turn();
		}
		expect(new Set(started).size).toBe(100);
		await fleet.stop();
	});

	it("starts nothing more once stopped", async () => {
		const { fleet, started, settle } = machines(40);
		fleet.start();
		await fleet.stop();
		settle.get("m0")?.();
		await turn();
		await turn();
		expect(started.length).toBe(32);
	});
});
