/**
 * Drill: the machine's token is revoked, then restored. The machine must read `unauthorized`
 * with a reason (and dispatches fail clearly meanwhile), come back `online` after the restore,
 * and runs that completed while it was locked out still produce their events.
 */
import { call, machineState, until } from "./lib/harness.ts";
import { heldRounds } from "./lib/held-runs.ts";
import { latestRunStatus } from "./lib/settle.ts";
import { type DrillSize, stackDrill, untilOnline } from "./lib/stack-drill.ts";
import type { DrillReport } from "./lib/tally.ts";

export function tokenDrill({ full }: DrillSize): Promise<DrillReport> {
	const rounds = full ? 6 : 1;
	const perRound = full ? 6 : 3;
	return stackDrill("token-revoked", {}, async (stack, sim) => {
		const notes: string[] = [];
		await heldRounds(stack, rounds, perRound, async (ids, round) => {
			sim.revokeToken(sim.token);
			sim.dropSockets();
			await until(
				() => machineState(stack, "demo") === "unauthorized",
				10_000,
				"unauthorized",
			);
			// Runs complete while the connector is locked out.
			for (const id of ids) sim.finishRun(id);
			await until(
				() => ids.every((id) => latestRunStatus(sim, id) === "completed"),
				10_000,
				"runs completed on the sim",
			);
			const refused = await call(stack.client, "t3_dispatch", {
				machine: "demo",
				project: "demo",
				prompt: "while revoked",
			});
			if (round === 0) {
				const reason =
					stack.server.services.fleet.get("demo")?.machine.status().reason ??
					"";
				notes.push(`while revoked, machine reason: ${reason}`);
				notes.push(
					`while revoked, t3_dispatch: isError=${refused.isError}: ${refused.text}`,
				);
			}
			if (!refused.isError || !/unauthorized/.test(refused.text))
				throw new Error(
					`dispatch while revoked was not refused clearly: ${refused.text}`,
				);
			sim.restoreToken(sim.token);
			await untilOnline(stack, "online after restore");
		});
		// Each lockout is one transition into unauthorized: one machine event each, no more.
		const unauthorized = () =>
			stack.receiver.deliveries.filter(
				(d) => d.body.type === "machine.unauthorized",
			).length;
		await until(
			() => unauthorized() >= rounds,
			10_000,
			"a machine.unauthorized per lockout",
		);
		if (unauthorized() !== rounds)
			throw new Error(
				`${unauthorized()} machine.unauthorized events for ${rounds} lockouts`,
			);
		notes.push(`machine.unauthorized events: ${rounds}, one per lockout`);
		return { notes };
	});
}
