/**
 * `orchestration.searchThreads` (RELEASED-0.1.md §3, read scope): message text of the live and
 * archived threads, newest message first. Input `{query: 2–200 characters, limit?: 1–50}`
 * (outside that, a schema `Die` like any bad payload); output `{matches: [{threadId, projectId,
 * source: "user" | "assistant", snippet (≤ 240), messageCreatedAt}]}`, one match per message.
 */
import type { Outcome } from "../engine/engine.ts";
import type { Store } from "../engine/store.ts";

const SNIPPET_MAX = 240;
const DEFAULT_LIMIT = 20;

export function searchThreads(
	store: Store,
	payload: Record<string, unknown>,
): Outcome {
	const { query: raw, limit } = payload;
	if (raw === undefined) return { die: 'Missing key\n  at ["query"]' };
	// T3 trims the query, then checks its length (SearchThreadsInput, RELEASED-0.1.md §3).
	const query = typeof raw === "string" ? raw.trim() : raw;
	if (typeof query !== "string" || query.length < 2 || query.length > 200)
		return {
			die: `Expected a string between 2 and 200 characters, got ${JSON.stringify(raw)}\n  at ["query"]`,
		};
	if (
		limit !== undefined &&
		(typeof limit !== "number" ||
			!Number.isInteger(limit) ||
			limit < 1 ||
			limit > 50)
	)
		return {
			die: `Expected an integer between 1 and 50, got ${JSON.stringify(limit)}\n  at ["limit"]`,
		};
	const needle = query.toLowerCase();
	const matches: Record<string, unknown>[] = [];
	for (const thread of store.threads.values()) {
		if (thread.app.deletedAt) continue;
		for (const message of thread.rows.messages) {
			const text = String(message.text ?? "");
			const at = text.toLowerCase().indexOf(needle);
			if (at < 0) continue;
			matches.push({
				threadId: thread.id,
				projectId: thread.app.projectId,
				source: message.role === "user" ? "user" : "assistant",
				snippet: snippetAround(text, at, query.length),
				messageCreatedAt: message.createdAt,
			});
		}
	}
	matches.sort((a, b) =>
		String(b.messageCreatedAt).localeCompare(String(a.messageCreatedAt)),
	);
	return {
		ok: {
			matches: matches.slice(0, (limit as number | undefined) ?? DEFAULT_LIMIT),
		},
	};
}

/** The match with context on both sides, at most SNIPPET_MAX characters. */
function snippetAround(text: string, at: number, length: number): string {
	if (text.length <= SNIPPET_MAX) return text;
	const room = Math.max(0, SNIPPET_MAX - length);
	const start = Math.max(
		0,
		Math.min(at - Math.floor(room / 2), text.length - SNIPPET_MAX),
	);
	return text.slice(start, start + SNIPPET_MAX);
}
