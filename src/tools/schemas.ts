/** Output schema pieces shared by several tools (CONTRACT.md "Tools"). */
import { z } from "zod";
import { pathSegmentProblem } from "../t3/connect/path-segment.ts";
import { ERROR_CLASSES } from "../t3/derive/run-failure.ts";

/** Ids and names are short; a longer one is a mistake, refused before any lookup. */
export const ID_MAX = 200;
/** Project references may be workspace paths. */
export const PATH_MAX = 4096;

export const projectRefSchema = z.object({
	id: z.string(),
	title: z.string(),
	path: z.string(),
});

/** A project as a held dispatch shows it: the title as given, no id or path until placed. */
export const heldProjectRefSchema = z.object({
	id: z.string().nullable(),
	title: z.string(),
	path: z.string().nullable(),
});

export const HELD_REASONS = [
	"not_before",
	"client_cap",
	"machine_cap",
	"usage_limit",
	"offline",
	"provider_not_ready",
	"no_project",
] as const;

/** `held` (CONTRACT.md "One pool", "Holding"). */
export const heldSchema = z.object({
	position: z
		.number()
		.int()
		.describe(
			"1 + the held dispatches (any client's) created earlier that could take a machine this one can take.",
		),
	reason: z
		.enum(HELD_REASONS)
		.describe("Why it cannot start now (the main reason)."),
	detail: z.string().describe("Each candidate machine and why it has no room."),
	since: z.string().describe("When it was held (ISO)."),
	not_before: z.string().nullable(),
});

export const questionSchema = z
	.object({
		request_id: z.string(),
		kind: z.enum(["user_input", "approval", "auth_refresh", "dynamic_tool"]),
		prompt: z.string().nullable(),
		answerable: z.boolean(),
		reason: z.string().nullable(),
		dismissable: z.boolean(),
		questions: z.array(
			z.object({
				id: z.string(),
				header: z.string().nullable(),
				text: z.string(),
				options: z.array(z.string()),
				multi_select: z.boolean(),
				allow_custom: z.boolean(),
				required: z.boolean(),
			}),
		),
		decisions: z
			.array(
				z.object({
					decision: z.string(),
					label: z.string(),
					warning: z.string().nullable(),
				}),
			)
			.nullable(),
		app_name: z.string().nullable(),
	})
	.nullable();

/**
 * A tool's arguments: an unknown one (a typo such as `runtime_mod`) is refused naming it and the
 * valid ones, never ignored; the published JSON Schema says `additionalProperties: false`.
 */
export function toolInput<S extends z.ZodRawShape>(shape: S) {
	const valid = Object.keys(shape);
	return z.strictObject(shape, {
		error: (issue) =>
			issue.code === "unrecognized_keys"
				? `unknown argument${issue.keys.length > 1 ? "s" : ""} ${issue.keys
						.map((k) => JSON.stringify(k.slice(0, 100)))
						.join(", ")}; valid arguments: ${valid.join(", ") || "none"}`
				: undefined,
	});
}

/**
 * An id that may become a T3 URL path segment (thread and run ids): refused when `.`, `..` or
 * holding `/` or `\` (src/t3/connect/path-segment.ts, the same check the URL builder makes).
 */
export function segmentIdArg(): z.ZodString {
	return z
		.string()
		.min(1)
		.max(ID_MAX)
		.superRefine((id, ctx) => {
			// Empty is already "Too small".
			const problem = id === "" ? null : pathSegmentProblem(id);
			if (problem !== null)
				ctx.addIssue({ code: "custom", message: `not a valid id: ${problem}` });
		});
}

export const machineArg = z
	.string()
	.min(1)
	.max(ID_MAX)
	.describe("Machine name, as listed by t3_machines.");

export const threadIdArg = segmentIdArg().describe(
	"The thread id returned by t3_dispatch or listed by t3_threads.",
);

/** An idempotency key: blank or whitespace-only is refused (it would look like no key). */
export function keyArg(): z.ZodString {
	return z
		.string()
		.min(1)
		.max(ID_MAX)
		.refine((key) => key === "" || key.trim() !== "", {
			message: "must not be blank or only whitespace",
		});
}

/** Control characters other than tab in a title would garble every list that shows it. */
const TITLE_CONTROL = /(?!\t)\p{Cc}/u;

/** A thread title: no control characters other than tab. */
export function titleArg(max: number): z.ZodString {
	return z
		.string()
		.max(max)
		.superRefine((title, ctx) => {
			const found = TITLE_CONTROL.exec(title);
			if (found)
				ctx.addIssue({
					code: "custom",
					message: `must not contain control characters (U+${(found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")} at position ${found.index}); only tab is allowed`,
				});
		});
}

export const idempotencyKeyArg = keyArg()
	.optional()
	.describe(
		"Your key for this operation: repeating the call with the same key and arguments returns the first result instead of acting again.",
	);

/** Why a run failed (released T3 0.1.x): spread into the result objects that describe a run. */
export const failureFields = {
	error_class: z
		.enum(ERROR_CLASSES)
		.nullable()
		.describe(
			"Why the run failed: usage_limit, provider_error, transport_error, permission_error, validation_error, workspace_preparation or unknown; null unless it failed.",
		),
	reset_at: z
		.string()
		.nullable()
		.describe("When a usage limit resets (ISO time); else null."),
	auto_resume: z
		.boolean()
		.describe("true when T3 will resume the run by itself (after reset_at)."),
};
