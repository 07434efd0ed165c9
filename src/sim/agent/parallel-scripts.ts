/**
 * Prompts for parallel work in one repository: "git status" (what the thread's checkout has
 * changed since its branch's commit, so a test can see the root checkout untouched), "what do
 * you remember" (the conversation a fork carries plus the thread's own, thread-fork.ts) and
 * "open a pull request" (T3 links it to the thread: shell `pullRequests`, `branchPullRequest`).
 */

import type { Store, ThreadState } from "../engine/store.ts";
import { carriedConversation } from "../engine/thread-fork.ts";
import { checkoutStatus } from "../repo/worktrees.ts";
import type { AgentScript } from "./script.ts";

export const STATUS_PROMPT = "git status";
export const REMEMBER_PROMPT = "what do you remember";
export const PULL_REQUEST_PROMPT = "open a pull request";

export function parallelScript(text: string): AgentScript | undefined {
	if (text.includes(STATUS_PROMPT))
		return async (io) => {
			await io.step();
			const { kit, handle } = io.scope;
			const changed = checkoutStatus(kit.store, handle.thread);
			const branch = handle.thread.app.branch ?? "main";
			await io.say(
				changed.length
					? `On branch ${String(branch)}. Changed: ${changed.join(", ")}.`
					: `On branch ${String(branch)}. Nothing to commit, working tree clean.`,
			);
		};
	if (text.includes(REMEMBER_PROMPT))
		return async (io) => {
			await io.step();
			const { kit, handle } = io.scope;
			const own = handle.thread.rows.messages
				.filter((m) => m.runId !== handle.run.id)
				.map((m) => ({ role: String(m.role), text: String(m.text) }));
			const all = [...carriedConversation(kit.store, handle.thread), ...own];
			await io.say(
				all.length
					? `I remember ${all.length} earlier messages: ${all.map((m) => `${m.role}: ${m.text}`).join(" | ")}`
					: "I remember nothing before this message.",
			);
		};
	if (text.includes(PULL_REQUEST_PROMPT))
		return async (io) => {
			await io.step();
			const { kit, handle } = io.scope;
			const pr = linkPullRequest(kit.store, handle.thread, io.prompt);
			await io.say(
				`Opened pull request #${String(pr.number)}: ${String(pr.url)}`,
			);
		};
	return undefined;
}

/** T3 links the pull request the agent opened to the thread (`thread.pull-request-synced`). */
function linkPullRequest(
	store: Store,
	thread: ThreadState,
	prompt: string,
): Record<string, unknown> {
	let count = 0;
	for (const t of store.threads.values())
		count += Array.isArray(t.app.pullRequests) ? t.app.pullRequests.length : 0;
	const number = 100 + count + 1;
	const titled = /titled\s+(.+)$/i.exec(prompt.trim())?.[1];
	const branch = String(thread.app.branch ?? "main");
	const pr: Record<string, unknown> = {
		host: "github.com",
		repository: "example/demo",
		number,
		url: `https://github.com/example/demo/pull/${number}`,
		state: "open",
		title: titled ?? `Changes from ${branch}`,
		headBranch: branch,
		source: "agent",
	};
	const prs = Array.isArray(thread.app.pullRequests)
		? thread.app.pullRequests
		: [];
	thread.app = {
		...thread.app,
		pullRequests: [...prs, pr],
		branchPullRequest: pr,
	};
	store.appendThreadEvent(thread, "thread.pull-request-synced", {
		providerInstanceId: String(thread.app.providerInstanceId),
	});
	return pr;
}
