/**
 * `orchestration.searchThreads` answers (RELEASED-0.1.md §3): `{matches: [{threadId, projectId,
 * source, snippet, messageCreatedAt}]}`. A match without a thread id is skipped.
 */
import type { SearchMatch } from "../model.ts";
import { arr, isRecord, str } from "./json.ts";

export function decodeSearchMatches(raw: unknown): SearchMatch[] {
	const out: SearchMatch[] = [];
	for (const m of arr(isRecord(raw) ? raw.matches : undefined)) {
		if (!isRecord(m) || typeof m.threadId !== "string") continue;
		out.push({
			threadId: m.threadId,
			projectId: str(m.projectId) ?? null,
			source: str(m.source) ?? "assistant",
			snippet: str(m.snippet) ?? "",
			messageCreatedAt: str(m.messageCreatedAt) ?? null,
		});
	}
	return out;
}
