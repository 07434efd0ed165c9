/**
 * The pull requests T3 links to a thread (shell `pullRequests` and the thread branch's
 * `branchPullRequest`, RELEASED-0.1.md §1), as `t3_thread` shows them: number, url, state and
 * title, each once. T3's texts are masked like every outside text; odd entries are skipped.
 */

import { capText } from "../../t3/derive/derive.ts";
import type { ThreadShell } from "../../t3/model.ts";

export interface PullRequestView {
	number: number | null;
	url: string | null;
	state: string | null;
	title: string | null;
}

function view(raw: unknown): PullRequestView | undefined {
	if (typeof raw !== "object" || raw === null) return undefined;
	const pr = raw as Record<string, unknown>;
	const text = (v: unknown, cap: number) =>
		typeof v === "string" && v !== "" ? capText(v, cap) : null;
	const out = {
		number: Number.isSafeInteger(pr.number) ? (pr.number as number) : null,
		url: text(pr.url, 500),
		state: text(pr.state, 40),
		title: text(pr.title, 300),
	};
	return out.number === null && out.url === null ? undefined : out;
}

export function pullRequestsOf(thread: ThreadShell): PullRequestView[] {
	const raw = [
		...(Array.isArray(thread.pullRequests) ? thread.pullRequests : []),
		thread.branchPullRequest,
	];
	const seen = new Set<string>();
	const out: PullRequestView[] = [];
	for (const entry of raw) {
		const pr = view(entry);
		if (!pr) continue;
		const key = pr.url ?? `#${pr.number}`;
		if (seen.has(key)) continue;
		seen.add(key);
		out.push(pr);
	}
	return out;
}
