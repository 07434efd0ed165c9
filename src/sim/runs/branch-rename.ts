/**
 * T3 renames a worktree's temporary branch (`t3code/<8 hex>`, server-invented or sent by a client
 * such as T3's app) in the background once the worktree exists: it asks a model for a name from
 * the launch's first message, `git branch -m`s to it and records it with `thread.metadata.update`
 * (event `thread.metadata-updated`, so the shell shows the new branch too). The temporary name
 * sticks when generation or the rename fails; a name a client chose is never touched
 * (`ThreadLaunchService.prepareInBackground`, idx 59486431798; REVIEW-fa93027.md §2a).
 */
import { nowIso } from "../engine/rows.ts";
import { isTemporaryBranch, renameBranch } from "../repo/worktrees.ts";
import type { RunHandle, RunKit } from "./run-rows.ts";

/**
 * The simulator's `generateBranchName` "model": the first line's first 6 words ("2-6 words" in
 * T3's prompt), shaped as T3's `sanitizeBranchFragment` shapes the model's answer: lower case,
 * other characters to `-`, at most 64 characters, `update` when nothing is left (idx 52891971135,
 * 69479796021). T3 keeps no `t3code/` prefix on the generated name.
 */
export function generatedBranchName(text: string): string {
	const words = (text.trim().split("\n")[0] ?? "")
		.split(/\s+/)
		.filter(Boolean)
		.slice(0, 6)
		.join(" ");
	const name = words
		.toLowerCase()
		.replace(/['"`]/g, "")
		.replace(/[^a-z0-9/_-]+/g, "-")
		.replace(/\/+/g, "/")
		.replace(/-+/g, "-")
		.replace(/^[./_-]+|[./_-]+$/g, "")
		.slice(0, 64)
		.replace(/[./_-]+$/g, "");
	return name || "update";
}

/**
 * After the worktree is provisioned: one step later (the model's latency; T3 never makes the
 * turn wait for it) the temporary branch gets its generated name. Skipped when the branch is
 * not temporary, the thread is gone or its branch changed meanwhile.
 */
export function scheduleBranchRename(kit: RunKit, h: RunHandle): void {
	const { thread } = h;
	const from = thread.app.branch;
	if (!thread.app.worktreePath || !isTemporaryBranch(from)) return;
	kit.scheduler.later(kit.stepMs, () => {
		if (thread.app.deletedAt || thread.app.branch !== from) return;
		const renamed = renameBranch(
			kit.store,
			thread,
			generatedBranchName(h.prompt),
		);
		if (!renamed || renamed === from) return;
		thread.app = { ...thread.app, branch: renamed, updatedAt: nowIso() };
		kit.store.appendThreadEvent(thread, "thread.metadata-updated", {
			providerInstanceId: h.instanceId,
		});
	});
}
