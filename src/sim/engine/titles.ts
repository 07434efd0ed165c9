/**
 * `generateTitle` on `launchThread`: T3 asks a model for a short title from the first message;
 * the simulator's "model" keeps its first line's first 8 words without trailing punctuation
 * (a prompt's own first line is the connector's fallback title, so the two can be told apart).
 */
export function generatedTitle(text: string): string {
	const words = (text.trim().split("\n")[0] ?? "")
		.replace(/[.!?:;,]+$/, "")
		.split(/\s+/)
		.filter(Boolean)
		.slice(0, 8);
	const title = words.join(" ");
	return title || "New thread";
}
