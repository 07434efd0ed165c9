/**
 * Where a new thread works (`t3_dispatch` `workspace`, `base_ref`, `branch`, `worktree_path`):
 * the project's root checkout or a git worktree on its own branch, as `launchThread`'s
 * `workspaceStrategy` (PROTOCOL.md §5.2, RELEASED-0.1.md §3). Refs are checked against git's
 * `check-ref-format` rules before anything is sent, and an existing worktree must be one T3
 * reports for that project. A new worktree without `branch` gets a temporary `t3code/<8 hex>`
 * name, as T3's app sends (`buildTemporaryWorktreeBranchName`, idx 53147870045), which T3
 * renames once it has generated a name (REVIEW-fa93027.md §2a, idx 59486431798).
 */
import type { ProjectShell, ThreadShell } from "../../t3/model.ts";
import { maskSecrets } from "../../util/redact.ts";
import { ThreadError } from "../errors.ts";

export type Workspace = "root" | "worktree";

export const REF_MAX = 200;

export interface WorkspaceArgs {
	workspace?: Workspace;
	base_ref?: string;
	branch?: string;
	worktree_path?: string;
}

const WORKSPACE_ARGS = [
	"workspace",
	"base_ref",
	"branch",
	"worktree_path",
] as const;

/**
 * Whether T3 may still rename this branch: T3's `isTemporaryWorktreeBranch` (`t3code/` and 8 hex
 * digits, trimmed, any case; idx 52891971135) is exactly what its background rename replaces,
 * whoever made the name (we, T3's app or the server). Any other name is final; a temporary one
 * sticks if T3's generation or rename fails, so it stays temporary then.
 */
export function isTemporaryBranch(branch: string | null): boolean {
	return (
		branch !== null && /^t3code\/[0-9a-f]{8}$/.test(branch.trim().toLowerCase())
	);
}

/**
 * `branch_temporary` (CONTRACT.md "Trust round three"): the thread's branch is still the
 * temporary name the connector chose at its launch. A caller's own `t3code/deadbeef` is final to
 * that caller, and so is a name another client chose; the connector's name is made from the
 * thread's id, which no caller knows before the launch, and recorded in the launch command.
 */
export function chosenTemporary(
	branch: string | null,
	threadId: string,
	launchPayload: string | undefined,
): boolean {
	if (branch === null || launchPayload === undefined) return false;
	if (!isTemporaryBranch(branch)) return false;
	const chosen = temporaryBranchName(threadId);
	const launched = (
		JSON.parse(launchPayload) as { workspaceStrategy?: { branch?: unknown } }
	).workspaceStrategy?.branch;
	return launched === chosen && branch.trim().toLowerCase() === chosen;
}

/**
 * A temporary branch name as T3's app makes one: `t3code/` and 8 lowercase hex digits of an id
 * (of its hash when the id has fewer), always the same for the same id.
 */
export function temporaryBranchName(id: string): string {
	const hex = id.toLowerCase().replace(/[^0-9a-f]/g, "");
	if (hex.length >= 8) return `t3code/${hex.slice(0, 8)}`;
	let hash = 0x811c9dc5;
	for (let i = 0; i < id.length; i++)
		hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
	return `t3code/${(hash >>> 0).toString(16).padStart(8, "0")}`;
}

/** Why `name` is not a valid git ref name (git check-ref-format), or null. */
export function refProblem(name: string): string | null {
	if (name.length === 0) return "must not be empty";
	if (name.length > REF_MAX)
		return `${name.length} characters is over the limit of ${REF_MAX}`;
	if (name.startsWith("-")) return "must not start with '-'";
	if (/[\p{Cc}\s~^:?*[\\]/u.test(name))
		return "must not contain spaces, control characters or any of ~ ^ : ? * [ \\";
	if (name.includes("..")) return "must not contain '..'";
	if (name.includes("@{")) return "must not contain '@{'";
	if (name === "@") return "must not be '@'";
	if (name.startsWith("/") || name.endsWith("/") || name.includes("//"))
		return "must not start or end with '/' or contain '//'";
	if (name.endsWith(".")) return "must not end with '.'";
	for (const part of name.split("/")) {
		if (part.startsWith(".")) return "no part may start with '.'";
		if (part.endsWith(".lock")) return "no part may end with '.lock'";
	}
	return null;
}

function checkRef(arg: "base_ref" | "branch", value: string | undefined): void {
	if (value === undefined) return;
	// `git check-ref-format --branch` also refuses HEAD, which names the checked-out commit.
	const problem =
		arg === "branch" && value === "HEAD"
			? "HEAD is not a branch name (git check-ref-format --branch)"
			: refProblem(value);
	if (problem)
		throw new ThreadError(
			`${arg}: "${value.slice(0, 80)}" is not a valid git ref name: ${problem} (git check-ref-format rules, at most ${REF_MAX} characters).`,
		);
}

/** A continuation or a fork runs where its thread is: the workspace arguments are refused. */
export function refuseWorkspaceArgs(args: WorkspaceArgs, why: string): void {
	const given = WORKSPACE_ARGS.find((k) => args[k] !== undefined);
	if (given)
		throw new ThreadError(
			`${given}: ${why} Leave out workspace, base_ref, branch and worktree_path.`,
		);
}

/** The project's default for new threads (T3's `defaultThreadEnvMode`), else root. */
export function defaultWorkspace(project: ProjectShell): Workspace {
	return project.defaultThreadEnvMode === "worktree" ? "worktree" : "root";
}

/** The worktrees T3 reports for a project: where its threads work, other than its root. */
export function knownWorktrees(
	project: ProjectShell,
	threads: readonly ThreadShell[],
): string[] {
	const paths = new Set<string>();
	for (const t of threads)
		if (
			t.projectId === project.id &&
			typeof t.worktreePath === "string" &&
			t.worktreePath !== "" &&
			t.worktreePath !== project.workspaceRoot
		)
			paths.add(t.worktreePath);
	return [...paths].sort();
}

/**
 * The `workspaceStrategy` a new thread launches with. A new worktree starts from `base_ref`,
 * default `HEAD` (the project's current branch), on `branch`, else on a temporary name made from
 * the new thread's id (so it is known later as the one the connector chose: `chosenTemporary`)
 * that T3 renames after the launch, as it does for its own app.
 */
export function workspaceStrategy(
	args: WorkspaceArgs,
	project: ProjectShell,
	threads: readonly ThreadShell[],
	threadId: string = crypto.randomUUID(),
): Record<string, unknown> {
	checkRef("base_ref", args.base_ref);
	checkRef("branch", args.branch);
	const workspace =
		args.workspace ??
		(args.worktree_path !== undefined ? "worktree" : defaultWorkspace(project));
	if (workspace === "root") {
		for (const arg of ["base_ref", "branch", "worktree_path"] as const)
			if (args[arg] !== undefined)
				throw new ThreadError(
					`${arg}: only used with workspace "worktree" (a thread in the root checkout works on the project's current branch). Pass workspace: "worktree" or leave ${arg} out.`,
				);
		return { type: "root" };
	}
	if (args.worktree_path !== undefined) {
		if (args.base_ref !== undefined)
			throw new ThreadError(
				"base_ref: not used with worktree_path (an existing worktree is already on its branch). Leave one of them out.",
			);
		const known = knownWorktrees(project, threads);
		if (!known.includes(args.worktree_path))
			throw new ThreadError(
				`worktree_path: "${maskSecrets(args.worktree_path.slice(0, 300))}" is not a worktree T3 reports for project "${project.title}" (${known.length ? `known: ${known.join(", ")}` : "it has none yet"}). Pass workspace: "worktree" without worktree_path to create one; t3_thread shows a thread's worktree_path.`,
			);
		return {
			type: "existing_worktree",
			worktreePath: args.worktree_path,
			...(args.branch !== undefined ? { branch: args.branch } : {}),
		};
	}
	return {
		type: "worktree",
		baseRef: args.base_ref ?? "HEAD",
		branch: args.branch ?? temporaryBranchName(threadId),
	};
}

/** A thread's current branch and worktree as T3 reports them (null where it has not said). */
export function placeShape(thread: { [key: string]: unknown }): {
	branch: string | null;
	worktree_path: string | null;
} {
	const text = (v: unknown) =>
		typeof v === "string" && v !== "" ? maskSecrets(v) : null;
	return {
		branch: text(thread.branch),
		worktree_path: text(thread.worktreePath),
	};
}
