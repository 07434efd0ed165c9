/**
 * The pool's test setup (CONTRACT.md "One pool", "Holding"): the bar's machines, and waits on
 * what t3_usage shows.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { SimOptions } from "../../src/sim/index.ts";
import { callTool, type MachineSpec, until } from "./stack.ts";

type UsageWindow = NonNullable<SimOptions["usage"]>[number];

/**
 * The bar's machines: a and b at max_active_runs 1, and c uncapped with its claudeAgent
 * session window used up (100 %, resets in an hour), `moreOnC` beside it.
 */
export function poolBarMachines(moreOnC: UsageWindow[] = []): MachineSpec[] {
	return [
		{ name: "a", maxActiveRuns: 1 },
		{ name: "b", maxActiveRuns: 1 },
		{
			name: "c",
			sim: {
				usage: [
					{
						provider: "claudeAgent",
						kind: "session",
						usedPercent: 100,
						resetsInMin: 60,
					},
					...moreOnC,
				],
			},
		},
	];
}

interface SessionUsage {
	machines: {
		usage: {
			provider: string;
			windows: { kind: string; used_percent: number | null }[];
		}[];
	}[];
}

/**
 * Until t3_usage shows the machine's claudeAgent session window used up (T3's config snapshot
 * comes on its own stream beside the shell's, so it can follow the machine being online).
 */
export function untilUsedUp(client: Client, machine: string): Promise<void> {
	return until(
		async () =>
			(
				await callTool<SessionUsage>(client, "t3_usage", { machine })
			).data.machines[0]?.usage
				.find((u) => u.provider === "claudeAgent")
				?.windows.find((w) => w.kind === "session")?.used_percent === 100,
		10_000,
		`${machine}'s usage`,
	);
}

/** Until the connector shows no machine with a busy thread (t3_usage's active_runs). */
export function untilIdle(
	client: Client,
	what = "every machine idle",
): Promise<void> {
	return until(
		async () =>
			(
				await callTool<{ machines: { active_runs: number }[] }>(
					client,
					"t3_usage",
					{},
				)
			).data.machines.every((m) => m.active_runs === 0),
		10_000,
		what,
	);
}
