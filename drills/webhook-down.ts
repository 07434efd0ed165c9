/**
 * Drill: the webhook answers 503 for ten simulated minutes, then comes back. The server runs
 * in-process on a manual clock, so the retry schedule (5 s, 30 s, 2 min, 10 min, …) plays out
 * in milliseconds. Every event must arrive once the receiver is back, with its original id.
 */
import { createManualClock } from "../src/util/clock.ts";
import { dispatchUntilAccepted, until } from "./lib/harness.ts";
import { type DrillSize, stackDrill } from "./lib/stack-drill.ts";
import type { DrillReport } from "./lib/tally.ts";

const MINUTE = 60_000;

export function webhookDownDrill({ full }: DrillSize): Promise<DrillReport> {
	const waves = full ? 5 : 2;
	const perWave = full ? 10 : 4;
	const clock = createManualClock();
	return stackDrill("webhook-down", { clock }, async (stack) => {
		const { delivery } = stack.server.services.events;
		const db = stack.server.services.db;
		const pending = () =>
			(
				db
					.query("SELECT COUNT(*) AS n FROM events WHERE status = 'pending'")
					.get() as { n: number }
			).n;
		const advance = async (ms: number, step = 5_000) => {
			for (let t = 0; t < ms; t += step) {
				clock.advance(step);
				await delivery.idle();
				await Bun.sleep(0);
			}
		};
		stack.receiver.setMode({ status: 503 });
		// Runs complete in waves spread over the outage.
		let dispatched = 0;
		for (let wave = 0; wave < waves; wave++) {
			const ids = await Promise.all(
				Array.from({ length: perWave }, (_, i) =>
					dispatchUntilAccepted(stack.client, "demo", `say hello ${wave}.${i}`),
				),
			);
			dispatched += ids.length;
			await until(() => pending() >= dispatched, 10_000, "events recorded");
			await advance((10 * MINUTE) / waves);
		}
		const failedAttempts = stack.receiver.attempts();
		const heldBack = pending();
		const lateDelivered = stack.receiver.deliveries.length;
		stack.receiver.setMode("ok");
		// Back: the longest gap left in the schedule after 10 min is the 10-min step (+20 % jitter).
		for (let m = 0; m < 40 && pending() > 0; m++) await advance(MINUTE);
		return {
			timeoutMs: 5_000,
			notes: [
				`503 for 10 simulated min: ${failedAttempts} refused attempts, ${heldBack} events held, ${lateDelivered} delivered during the outage; all pending after: ${pending()}`,
			],
		};
	});
}
