/**
 * The simulator's git repositories, one per project, in memory only (never the disk): the root
 * checkout on the project's current branch, and worktrees, each its own tree on its own branch
 * created from a base ref (`launchThread` `workspaceStrategy`, RELEASED-0.1.md §3). Edits of
 * root-checkout threads reach its tree (each such thread's diffs still show only its own runs,
 * workspace.ts); a worktree thread sees only its worktree, so threads in different worktrees
 * never see each other's edits and the root checkout stays untouched.
 * Preparation fails like T3's does: an unknown base ref, or a branch that already exists (left
 * behind by an earlier worktree). Uncommitted changes in the root checkout do not matter: a
 * worktree starts from the base ref's commit, as `git worktree add` does.
 *
 * A dirty tree fails only where a checkout has to happen in it: `existing_worktree` with a
 * `branch` other than the worktree's. What was confirmed in T3's released source: its
 * `prepareWorktreeBase` only resolves (and, with `startFromOrigin`, fetches) the base ref and
 * has no dirty check, and the contract gives `existing_worktree` an optional `branch`. NOT
 * confirmed: that T3 checks that branch out in the worktree, and its exact message. The
 * simulator assumes it does and fails as `git checkout` would (unknown ref, branch checked out
 * elsewhere, local changes), but refuses ANY uncommitted change, stricter than git (which
 * refuses only changes the switch would overwrite). The pre-release engine ignores `branch`.
 */
import type { ProjectState, Store, ThreadState } from "./store.ts";
import { attachTree, mirrorInto, SEED, type Tree } from "./workspace.ts";

interface Worktree {
	path: string;
	branch: string;
	files: Tree;
}

interface Repo {
	/** The root checkout's branch. */
	current: string;
	/** Branch → its committed tree. */
	branches: Map<string, Tree>;
	/** The root checkout's working tree. */
	root: Tree;
	/** Worktree path → worktree. */
	worktrees: Map<string, Worktree>;
}

/** A new worktree from a base ref, or a branch to check out in an existing worktree. */
export type WorktreeRequest =
	| { kind: "new"; baseRef: string; branch: string | null }
	| { kind: "checkout"; worktreePath: string; branch: string };

const repos = new WeakMap<ProjectState, Repo>();
/** Threads whose worktree is still to be prepared (again, after a failure). */
const pending = new WeakMap<ThreadState, WorktreeRequest>();

function repoOf(project: ProjectState): Repo {
	let repo = repos.get(project);
	if (!repo) {
		repo = {
			current: "main",
			branches: new Map([["main", new Map(SEED)]]),
			root: new Map(SEED),
			worktrees: new Map(),
		};
		repos.set(project, repo);
	}
	return repo;
}

function projectOf(
	store: Store,
	thread: ThreadState,
): ProjectState | undefined {
	return store.projects.get(String(thread.app.projectId));
}

/** A ref as git resolves it here: `HEAD` (the root checkout's branch), a branch, or `origin/<branch>`. */
function resolveRef(repo: Repo, ref: string): Tree | undefined {
	if (ref === "HEAD") return repo.branches.get(repo.current);
	return (
		repo.branches.get(ref) ?? repo.branches.get(ref.replace(/^origin\//, ""))
	);
}

/** Why a launch's `workspaceStrategy` cannot be used at all: an unknown existing worktree. */
export function refuseStrategy(
	store: Store,
	projectId: string,
	strategy: Record<string, unknown> | undefined,
): string | undefined {
	const project = store.projects.get(projectId);
	if (!project || strategy?.type !== "existing_worktree") return undefined;
	return repoOf(project).worktrees.has(String(strategy.worktreePath))
		? undefined
		: `Worktree ${String(strategy.worktreePath)} is not a worktree of project ${projectId}.`;
}

/**
 * Places a new thread by its `workspaceStrategy`: the root checkout or an existing worktree
 * now, or a new worktree prepared when its first run is (`prepareWorktree`).
 */
export function placeThread(
	store: Store,
	thread: ThreadState,
	strategy: Record<string, unknown> | undefined,
	switchBranches = true,
): void {
	const project = projectOf(store, thread);
	if (!project) return;
	const repo = repoOf(project);
	const type = strategy?.type;
	if (type === "worktree") {
		pending.set(thread, {
			kind: "new",
			baseRef: String(strategy?.baseRef ?? repo.current),
			branch: typeof strategy?.branch === "string" ? strategy.branch : null,
		});
		return;
	}
	const wt =
		type === "existing_worktree"
			? repo.worktrees.get(String(strategy?.worktreePath))
			: undefined;
	const branch = strategy?.branch;
	if (
		wt &&
		switchBranches &&
		typeof branch === "string" &&
		branch !== wt.branch
	) {
		pending.set(thread, { kind: "checkout", worktreePath: wt.path, branch });
		return;
	}
	if (wt) {
		thread.app = { ...thread.app, branch: wt.branch, worktreePath: wt.path };
		attachTree(thread, wt.files);
		return;
	}
	mirrorInto(thread, repo.root);
}

/** Whether the thread waits for its worktree to be prepared. */
export function needsWorktree(thread: ThreadState): boolean {
	return pending.has(thread);
}

/**
 * Prepares the thread's worktree: undefined when done (the thread's branch and worktreePath
 * are set), else T3's reason. A failed preparation stays pending for `prepared-run.retry`.
 */
export function prepareWorktree(
	store: Store,
	thread: ThreadState,
): string | undefined {
	const request = pending.get(thread);
	const project = projectOf(store, thread);
	if (!request || !project) return undefined;
	const repo = repoOf(project);
	if (request.kind === "checkout")
		return checkoutIn(project, repo, thread, request);
	const base = resolveRef(repo, request.baseRef);
	if (!base) return `fatal: invalid reference: ${request.baseRef}`;
	const branch =
		request.branch ?? `t3code/${thread.id.replace(/^thread-/, "").slice(0, 8)}`;
	if (repo.branches.has(branch))
		return `fatal: a branch named '${branch}' already exists`;
	const path = `${String(project.row.workspaceRoot).replace(/\/$/, "")}.worktrees/${branch.replaceAll("/", "-")}`;
	const wt: Worktree = { path, branch, files: new Map(base) };
	repo.branches.set(branch, new Map(base));
	repo.worktrees.set(path, wt);
	pending.delete(thread);
	thread.app = { ...thread.app, branch, worktreePath: path };
	attachTree(thread, wt.files);
	return undefined;
}

/** Where a branch is checked out: the root checkout's path or a worktree's, if anywhere. */
function checkedOutAt(
	project: ProjectState,
	repo: Repo,
	branch: string,
): string | undefined {
	if (repo.current === branch) return String(project.row.workspaceRoot);
	return [...repo.worktrees.values()].find((w) => w.branch === branch)?.path;
}

/** The files of a tree that differ from its branch's commit (`git status --porcelain`). */
function changedPaths(tree: Tree, committed: Tree): string[] {
	const paths = [...new Set([...tree.keys(), ...committed.keys()])].sort();
	return paths.filter((p) => tree.get(p) !== committed.get(p));
}

/** `git checkout <branch>` in an existing worktree, refused as git refuses it. */
function checkoutIn(
	project: ProjectState,
	repo: Repo,
	thread: ThreadState,
	request: { worktreePath: string; branch: string },
): string | undefined {
	const wt = repo.worktrees.get(request.worktreePath);
	const target = repo.branches.get(request.branch);
	if (!wt || !target) return `fatal: invalid reference: ${request.branch}`;
	const elsewhere = checkedOutAt(project, repo, request.branch);
	if (elsewhere)
		return `fatal: '${request.branch}' is already checked out at '${elsewhere}'`;
	const dirty = changedPaths(
		wt.files,
		repo.branches.get(wt.branch) ?? new Map(),
	);
	if (dirty.length > 0)
		return `error: Your local changes to the following files would be overwritten by checkout: ${dirty.join(", ")}. Please commit your changes or stash them before you switch branches.`;
	wt.branch = request.branch;
	// In place: every thread working in this worktree sees the switched tree.
	wt.files.clear();
	for (const [p, text] of target) wt.files.set(p, text);
	pending.delete(thread);
	thread.app = { ...thread.app, branch: wt.branch, worktreePath: wt.path };
	attachTree(thread, wt.files);
	return undefined;
}

/** What `git status` says in the thread's checkout: the files changed since its branch's commit. */
export function checkoutStatus(store: Store, thread: ThreadState): string[] {
	const project = projectOf(store, thread);
	if (!project) return [];
	const repo = repoOf(project);
	const path = thread.app.worktreePath;
	const wt = typeof path === "string" ? repo.worktrees.get(path) : undefined;
	const tree = wt ? wt.files : repo.root;
	const committed =
		repo.branches.get(wt ? wt.branch : repo.current) ?? new Map();
	return changedPaths(tree, committed);
}

/** A fork works where its source does: the same checkout or worktree. */
export function placeFork(
	source: ThreadState,
	fork: ThreadState,
	store: Store,
): void {
	const project = projectOf(store, source);
	if (!project) return;
	const repo = repoOf(project);
	const path = source.app.worktreePath;
	const wt = typeof path === "string" ? repo.worktrees.get(path) : undefined;
	if (wt) attachTree(fork, wt.files);
	else mirrorInto(fork, repo.root);
}

/** Test helper: the worktree at `path`, with its repo, or undefined. */
function findWorktree(
	store: Store,
	path: string,
): { repo: Repo; wt: Worktree } | undefined {
	for (const project of store.projects.values()) {
		const repo = repoOf(project);
		const wt = repo.worktrees.get(path);
		if (wt) return { repo, wt };
	}
	return undefined;
}

/** `git branch <name> <from>` in a project's repository (as another git user would). */
export function createBranch(
	store: Store,
	projectId: string,
	name: string,
	from = "main",
): void {
	const project = store.projects.get(projectId);
	const base = project && resolveRef(repoOf(project), from);
	if (!project || !base)
		throw new Error(`sim: no project ${projectId} or ref ${from}`);
	repoOf(project).branches.set(name, new Map(base));
}

/** `git checkout -- .` in a worktree: drops its uncommitted changes, in place. */
export function discardChanges(store: Store, worktreePath: string): void {
	const found = findWorktree(store, worktreePath);
	if (!found) throw new Error(`sim: no worktree ${worktreePath}`);
	const committed = found.repo.branches.get(found.wt.branch) ?? new Map();
	found.wt.files.clear();
	for (const [p, text] of committed) found.wt.files.set(p, text);
}
