/**
 * Drill: five machines flap (sockets dropped or the T3 server restarted) every few seconds
 * while runs are dispatched and complete. Dispatches retry with their request_id while a
 * machine is down; every run that reached a terminal status must produce its one event.
 */
import type { Sim } from "../src/sim/index.ts";
import { dispatchUntilAccepted, seeded } from "./lib/harness.ts";
import { type DrillSize, stackDrill, untilOnline } from "./lib/stack-drill.ts";
import type { DrillReport } from "./lib/tally.ts";

const NAMES = ["m1", "m2", "m3", "m4", "m5"];

export function flappingDrill({ full }: DrillSize): Promise<DrillReport> {
	const durationMs = full ? 60_000 : 6_000;
	const flapMinMs = full ? 1_500 : 600;
	const flapSpanMs = full ? 2_500 : 900;
	const workers = full ? 8 : 4;
	const random = seeded(Number(process.env.DRILL_SEED ?? 5));
	return stackDrill("flapping", { machines: NAMES }, async (stack) => {
		let flaps = 0;
		let restarts = 0;
		let dispatched = 0;
		let gaveUp = 0;
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
		await untilOnline(stack, "all online after flapping", 15_000);
		return {
			timeoutMs: 30_000,
			notes: [
				`5 machines, ${flaps} flaps (${restarts} T3 restarts) in ${durationMs / 1000} s; ${dispatched} dispatches, ${gaveUp} gave up`,
			],
		};
	});
}
