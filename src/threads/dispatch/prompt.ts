/** The rules every prompt T3 will run follows (t3_dispatch, t3_manage edit_queued). */
import { ThreadError } from "../errors.ts";

export const PROMPT_LIMIT = 100_000;

/** Something besides whitespace and control characters, at most PROMPT_LIMIT code points. */
export function checkPrompt(prompt: string): void {
	// Control characters are not a message either (a NUL-only prompt would start an empty run).
	if (prompt.replace(/[\p{Cc}\p{Cf}\s]/gu, "") === "")
		throw new ThreadError(
			"prompt: must not be empty (or only whitespace and control characters).",
		);
	// Characters are code points (as JSON Schema's maxLength counts them), not UTF-16 units.
	let length = 0;
	for (const _ of prompt) length++;
	if (length > PROMPT_LIMIT)
		throw new ThreadError(
			`prompt: ${length} characters is over the limit of ${PROMPT_LIMIT}. Shorten it or put the material in a file in the project and refer to it.`,
		);
}
