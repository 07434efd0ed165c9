/**
 * Drill: five machines flap (sockets dropped or the T3 server restarted) every few seconds
 * while runs are dispatched and complete. Dispatches retry with their request_id while a
 * machine is down; every run that reached a terminal status must produce its one event.
 */
import type { Sim } from "../src/sim/index.ts";
import {
	dispatchUntilAccepted,
	machineState,
	seeded,
	startDrillStack,
	until,
} from "./lib/harness.ts";
import { settleAndTally } from "./lib/settle.ts";
import type { DrillReport } from "./lib/tally.ts";

const NAMES = ["m1", "m2", "m3", "m4", "m5"];

export async function flappingDrill({
	full,
}: {
	full: boolean;
}): Promise<DrillReport> {
	const startedAt = performance.now();
	const durationMs = full ? 60_000 : 6_000;
	const flapMinMs = full ? 1_500 : 600;
	const flapSpanMs = full ? 2_500 : 900;
	const workers = full ? 8 : 4;
	const random = seeded(Number(process.env.DRILL_SEED ?? 5));
	const stack = await startDrillStack({ machines: NAMES });
	let flaps = 0;
	let restarts = 0;
	let dispatched = 0;
	let gaveUp = 0;
	try {
		await until(
			() => NAMES.every((n) => machineState(stack, n) === "online"),
			10_000,
			"all online",
		);
		const endAt = Date.now() + durationMs;
		const flapper = async (sim: Sim) => {
			while (Date.now() < endAt) {
				await Bun.sleep(flapMinMs + random() * flapSpanMs);
				if (Date.now() >= endAt) break;
				flaps += 1;
				if (random() < 0.4) {
					restarts += 1;
					await sim.restart();
				} else sim.dropSockets();
			}
		};
		const worker = async (w: number) => {
			for (let i = 0; Date.now() < endAt; i++) {
				const name = NAMES[Math.floor(random() * NAMES.length)] as string;
				dispatched += 1;
				const id = await dispatchUntilAccepted(
					stack.client,
					name,
					`say hello ${w}.${i}`,
					10_000,
				);
				if (!id) gaveUp += 1;
				await Bun.sleep(random() * 100);
			}
		};
		await Promise.all([
			...[...stack.sims.values()].map(flapper),
			...Array.from({ length: workers }, (_, w) => worker(w)),
		]);
		await until(
			() => NAMES.every((n) => machineState(stack, n) === "online"),
			15_000,
			"all online after flapping",
		);
		return await settleAndTally(
			"flapping",
			stack.sims.values(),
			stack.receiver,
			startedAt,
			{
				explain: stack.explain,
				timeoutMs: 30_000,
				notes: [
					`5 machines, ${flaps} flaps (${restarts} T3 restarts) in ${durationMs / 1000} s; ${dispatched} dispatches, ${gaveUp} gave up`,
				],
			},
		);
	} finally {
		await stack.stop();
	}
}
