/** Output schema pieces shared by several tools (CONTRACT.md "Tools"). */
import { z } from "zod";

/** Ids and names are short; a longer one is a mistake, refused before any lookup. */
export const ID_MAX = 200;
/** Project references may be workspace paths. */
export const PATH_MAX = 4096;

export const projectRefSchema = z.object({
	id: z.string(),
	title: z.string(),
	path: z.string(),
});

export const questionSchema = z
	.object({
		request_id: z.string(),
		kind: z.enum(["user_input", "approval"]),
		prompt: z.string().nullable(),
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
	})
	.nullable();

export const machineArg = z
	.string()
	.min(1)
	.max(ID_MAX)
	.describe("Machine name, as listed by t3_machines.");

export const threadIdArg = z
	.string()
	.min(1)
	.max(ID_MAX)
	.describe("The thread id returned by t3_dispatch or listed by t3_threads.");

export const idempotencyKeyArg = z
	.string()
	.min(1)
	.max(ID_MAX)
	.optional()
	.describe(
		"Your key for this operation: repeating the call with the same key and arguments returns the first result instead of acting again.",
	);
