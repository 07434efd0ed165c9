/**
 * How T3's texts are cut for the tools: masked first, then capped with a visible marker, so no
 * piece of a secret survives the cut.
 */

import { maskAndCap } from "../../util/redact.ts";

export const TRUNCATION_MARKER = "…[truncated]";

/**
 * `text` (from T3) with every secret masked, then cut to at most `maxChars` characters ending
 * with a visible marker when cut: masked first, so no piece of a secret survives the cut.
 */
export function capText(text: string, maxChars: number): string {
	return maskAndCap(text, maxChars, TRUNCATION_MARKER);
}
