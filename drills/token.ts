/**
 * Drill: the machine's token is revoked, then restored. The machine must read `unauthorized`
 * with a reason (and dispatches fail clearly meanwhile), come back `online` after the restore,
 * and runs that completed while it was locked out still produce their events.
 */
import {
	call,
	dispatchUntilAccepted,
	machineState,
	startDrillStack,
	until,
} from "./lib/harness.ts";
import { latestRunStatus, settleAndTally } from "./lib/settle.ts";
import type { DrillReport } from "./lib/tally.ts";

export async function tokenDrill({
	full,
}: {
	full: boolean;
}): Promise<DrillReport> {
	const startedAt = performance.now();
	const rounds = full ? 6 : 1;
	const perRound = full ? 6 : 3;
	const stack = await startDrillStack();
	const notes: string[] = [];
	try {
		const sim = stack.sim();
		await until(
			() => machineState(stack, "demo") === "online",
			10_000,
			"online",
		);
		for (let round = 0; round < rounds; round++) {
			const held = await Promise.all(
				Array.from({ length: perRound }, (_, i) =>
					dispatchUntilAccepted(
						stack.client,
						"demo",
						`long task ${round}.${i}`,
					),
				),
			);
			const ids = held.filter((id): id is string => id !== null);
			await until(
				() => ids.every((id) => latestRunStatus(sim, id) === "running"),
				10_000,
				"held runs running",
			);
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
			await until(
				() => machineState(stack, "demo") === "online",
				10_000,
				"online after restore",
			);
		}
		return await settleAndTally(
			"token-revoked",
			stack.sims.values(),
			stack.receiver,
			startedAt,
			{
				explain: stack.explain,
				notes,
			},
		);
	} finally {
		await stack.stop();
	}
}
