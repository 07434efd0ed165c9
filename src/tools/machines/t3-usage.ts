/** `t3_usage`: the pool at a glance: each machine's busy threads, cap and provider usage. */

import { z } from "zod";
import { ok, ToolFailure } from "../../mcp/result.ts";
import { clientPool, machinePool } from "../../pool/report.ts";
import { slotsOf } from "../../rights/run-slots.ts";
import { ID_MAX, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { poolFields } from "./usage-schema.ts";

const SETTLE_MS = 2_000;

export const t3Usage = defineTool({
	name: "t3_usage",
	title: "Show machine load and provider usage",
	description:
		"Show the pool: for each machine you reach, its state, how many threads are busy there against its max_active_runs, and each provider's usage windows as T3 reports them (used_percent and when each resets). Also your client's busy threads against its own cap (a full-access client sees every client). Also the held dispatches (total and the oldest's time; per machine those only it can take). Use it to see why a dispatch with a machine pattern was held or refused no_capacity or where it would go; `machine` narrows to one machine.",
	inputSchema: toolInput({
		machine: z
			.string()
			.min(1)
			.max(ID_MAX)
			.optional()
			.describe("Only this machine (a name from t3_machines)."),
	}),
	outputSchema: z.object({
		machines: z.array(
			z.object({
				name: z.string(),
				state: z.enum([
					"connecting",
					"online",
					"offline",
					"unauthorized",
					"incompatible",
				]),
				...poolFields,
			}),
		),
		held: z
			.object({ total: z.number(), oldest_since: z.string().nullable() })
			.describe(
				"Held dispatches (a full-access client: all clients'; any other: its own) and when the oldest was held.",
			),
		clients: z.array(
			z.object({
				name: z.string(),
				active_runs: z.number(),
				max_active_runs: z.number().nullable(),
				held: z.number(),
			}),
		),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ machine }, { client }, services) {
		const { fleet, threadDeps, config } = services;
		let entries = fleet.list();
		if (machine !== undefined) {
			const entry = fleet.get(machine);
			if (!entry)
				throw new ToolFailure(
					`Unknown machine "${machine}". Machines you reach: ${fleet.names().join(", ") || "none"}.`,
				);
			entries = [entry];
		}
		const connecting = entries
			.filter((e) => e.machine.status().state === "connecting")
			.map((e) => e.machine.ready(SETTLE_MS).catch(() => {}));
		if (connecting.length > 0) await Promise.all(connecting);
		const ledger = threadDeps.slots ?? slotsOf(fleet, threadDeps.now);
		const ofClient = (name: string) =>
			services.threadDeps.threads.ofClient(name);
		const everyone = client.access === "full-access";
		const holding = threadDeps.holding;
		const mine = everyone ? undefined : client.name;
		const shown = everyone
			? [
					...config.clients,
					...(config.clients.some((c) => c.name === client.name)
						? []
						: [client]),
				]
			: [client];
		return ok({
			machines: entries.map((entry) => ({
				name: entry.config.name,
				state: entry.machine.status().state,
				...machinePool(ledger, entry, holding),
			})),
			held: {
				total: holding?.count(mine) ?? 0,
				oldest_since: holding?.oldestSince(mine) ?? null,
			},
			clients: shown.map((c) => clientPool(ledger, c, ofClient, holding)),
		});
	},
});
