/** `t3_machines`: every configured machine with its connection state. */

import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { ACCESS_LEVELS } from "../../config/types.ts";
import { ok } from "../../mcp/result.ts";
import { busyVersion } from "../../pool/capacity.ts";
import { type MachinePool, machinePool } from "../../pool/report.ts";
import { slotsOf } from "../../rights/run-slots.ts";
import { providerStatusVersion } from "../../t3/capabilities/provider-status.ts";
import { shownStatusVersion } from "../../t3/connect/link.ts";
import { projectListVersion } from "../../t3/follow/shell-mirror.ts";
import { modelName } from "../../threads/shapes.ts";
import { toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { poolFields } from "./usage-schema.ts";

const SETTLE_MS = 2_000;

/** The last answer per fleet (one per client view, shared by unbounded clients: the client is one of its parts). */
const answers = new WeakMap<
	object,
	{ parts: unknown[]; result: CallToolResult }
>();

export const t3Machines = defineTool({
	name: "t3_machines",
	title: "List T3 machines",
	description:
		"List every T3 Code machine this server is configured for, with its connection state (connecting, online, offline, unauthorized, incompatible), the reason when it is not online, its T3 server version, the projects you may use there, its default model, its busy threads against its max_active_runs and each provider's usage windows (t3_usage shows the pool alone). Call this first to pick a machine, then t3_projects for its projects (and t3_models for its models) before t3_dispatch; or to find out why a machine fails.",
	inputSchema: toolInput({}),
	outputSchema: z.object({
		machines: z.array(
			z.object({
				name: z.string(),
				url: z.string(),
				state: z.enum([
					"connecting",
					"online",
					"offline",
					"unauthorized",
					"incompatible",
				]),
				reason: z.string().nullable(),
				server_version: z.string().nullable(),
				projects: z.array(z.string()),
				model: z.string().nullable(),
				token_expires_at: z
					.string()
					.nullable()
					.describe(
						"When this machine's T3 token stops working (ISO time), as T3 says; null when it does not say. Paired tokens last 30 days.",
					),
				...poolFields,
			}),
		),
		client: z
			.object({
				name: z.string(),
				access: z.enum(ACCESS_LEVELS),
				approve: z.boolean(),
				machines: z.array(z.string()),
				projects: z.array(z.string()),
			})
			.describe(
				"Your own rights here: your client's name, its T3 access level (read-only < approval-required < auto-accept-edits < auto < full-access: your runs never go above it), whether you may answer approvals, and the machine and project patterns you reach.",
			),
		note: z
			.string()
			.nullable()
			.describe(
				"Set when this server runs with in-memory state (its state file is used by another process): what that means for watched threads and events.",
			),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler(_args, { client }, { fleet, stateNote, threadDeps }) {
		// Right after start-up a machine is still connecting; a moment usually settles it.
		const connecting: Promise<unknown>[] = [];
		for (const e of fleet.list())
			if (e.machine.status().state === "connecting")
				connecting.push(e.machine.ready(SETTLE_MS).catch(() => {}));
		if (connecting.length > 0) await Promise.all(connecting);
		// The same answer while nothing in it changed: what any machine's status shows, and any
		// machine's project list (replaced, never changed in place, when a project changes).
		// The pool's figures: busy threads per machine (reservations included) and usage. A
		// machine's busy set is made on first use: before the version is read.
		const ledger = threadDeps.slots ?? slotsOf(fleet, threadDeps.now);
		const pools = () =>
			fleet
				.list()
				.map((entry) => machinePool(ledger, entry, threadDeps.holding));
		if (!answers.has(fleet)) pools();
		const parts: unknown[] = [
			stateNote,
			client,
			// A new array when a reload changed the machines (fleet.ts).
			fleet.list(),
			shownStatusVersion(),
			projectListVersion(),
			providerStatusVersion(),
			busyVersion(),
			ledger.version(),
			threadDeps.holding?.version(),
		];
		const kept = answers.get(fleet);
		if (
			kept &&
			kept.parts.length === parts.length &&
			kept.parts.every((p, i) => p === parts[i])
		)
			return kept.result;
		const pooled = pools();
		const machines = fleet.list().map((entry, i) => {
			const status = entry.machine.status();
			return {
				name: entry.config.name,
				url: entry.config.url,
				state: status.state,
				reason: status.reason,
				server_version: status.serverVersion,
				projects: fleet.projects(entry).map((p) => p.title),
				model: modelName(entry.config.model),
				token_expires_at: status.tokenExpiresAt ?? null,
				...(pooled[i] as MachinePool),
			};
		});
		const { name, access, approve } = client;
		const result = ok({
			machines,
			client: {
				name,
				access,
				approve,
				machines: client.machines,
				projects: client.projects,
			},
			note: stateNote,
		});
		answers.set(fleet, { parts, result });
		return result;
	},
});
