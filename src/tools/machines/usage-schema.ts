/** The pool fields `t3_machines` and `t3_usage` share (CONTRACT.md "One pool"). */
import { z } from "zod";

export const usageSchema = z
	.array(
		z.object({
			provider: z.string(),
			ready: z.boolean(),
			windows: z.array(
				z.object({
					kind: z
						.string()
						.describe(
							"session, weekly, monthly or other (only orders and labels the bar).",
						),
					label: z.string(),
					used_percent: z
						.number()
						.nullable()
						.describe("0-100; null when T3 did not say (unknown, not 0 %)."),
					resets_at: z.string().nullable(),
				}),
			),
			unavailable: z
				.object({ reason: z.string(), message: z.string().nullable() })
				.nullable()
				.describe(
					"Why T3 has no windows: unsupported (the account never reports them) or probeFailed (the last probe failed; the last known windows are kept).",
				),
			checked_at: z.string().nullable(),
		}),
	)
	.describe(
		"Each provider's usage limits as T3 reports them (server.getConfig, then subscribeServerConfig); [] when this T3 reports none.",
	);

export const poolFields = {
	active_runs: z
		.number()
		.describe(
			"Busy threads on the machine now (a run preparing, starting, running, waiting or queued; whoever started it, T3's UI included), dispatches being sent included.",
		),
	max_active_runs: z
		.number()
		.nullable()
		.describe("The machine's cap on busy threads; null = unlimited."),
	held: z
		.number()
		.describe(
			"Held dispatches only this machine can take (named, or a pattern that matches only it within their client's reach).",
		),
	usage: usageSchema,
};
