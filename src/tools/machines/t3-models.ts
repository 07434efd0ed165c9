/** `t3_models`: the models a machine really offers, whether each can run now, and its options. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { listModels } from "../../threads/dispatch/model-catalog.ts";
import { machineArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Models = defineTool({
	name: "t3_models",
	title: "List models on a T3 machine",
	description:
		'List the models one T3 machine offers, from its providers (Claude, Codex, …). Use it before t3_dispatch when you want a model other than the machine\'s default_model, plan mode or model options. Each entry gives `model`, the exact "<provider>/<slug>" string to pass as t3_dispatch `model`; `ready` (false with `reason` when the provider is not installed, not signed in or disabled — such a model cannot run); `plan_mode` (whether interaction_mode "plan" works); `steer` (live, restart or none: how t3_dispatch mode "steer" reaches a running run); and `options` (id, label, type, allowed values, default), which you pass as t3_dispatch `options: {id: value}`. The list is cached and refreshed when the machine reconnects or reports a config change.',
	inputSchema: toolInput({
		machine: machineArg,
	}),
	outputSchema: z.object({
		machine: z.string(),
		default_model: z.string().nullable(),
		models: z.array(
			z.object({
				model: z.string(),
				provider: z.string(),
				name: z.string(),
				ready: z.boolean(),
				reason: z.string().nullable(),
				plan_mode: z.boolean(),
				steer: z
					.enum(["live", "restart", "none"])
					.describe(
						"How a follow-up with mode steer reaches a running run: live (joins the turn), restart (the turn is interrupted and started again with the message), none (it queues).",
					),
				options: z.array(
					z.object({
						id: z.string(),
						label: z.string(),
						type: z.enum(["select", "boolean"]),
						values: z.array(z.string()),
						default: z.union([z.string(), z.boolean()]).nullable(),
					}),
				),
			}),
		),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ machine }, _ctx, { threadDeps }) {
		return ok(await listModels(threadDeps, machine));
	},
});
