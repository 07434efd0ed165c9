/**
 * Room `sim/repo/`: the simulator's git repositories and workspaces, in memory only: branches,
 * worktrees and the file tree an agent edits. Imports nothing of the simulator but store types.
 */
/**
 * The simulator's git repositories, one per project, in memory only (never the disk): the root
 * checkout on the project's current branch, and worktrees, each its own tree on its own branch
 * created from a base ref (`launchThread` `workspaceStrategy`, RELEASED-0.1.md §3). Edits of
 * root-checkout threads reach its tree (each such thread's diffs still show only its own runs,
 * workspace.ts); a worktree thread sees only its worktree, so threads in different worktrees
 * never see each other's edits and the root checkout stays untouched.
 * Preparation fails like T3's does: an unknown base ref, or a branch that already exists (left
 * behind by an earlier worktree). Uncommitted changes in the root checkout do not matter: a
 * worktree starts from the base ref's commit, as `git worktree add` does, and T3's own
 * preparation (`prepareWorktreeBase`, GitWorkflowService in 0.1.x) only resolves the base ref
 * (fetching it with `startFromOrigin`): no dirty-state failure is modelled because T3 has none.
 * Without a branch T3 provisions under a temporary `t3code/<8 hex>` name and renames it once a
 * name is generated (`ThreadLaunchService`, REVIEW-fa93027.md §2a, idx 59486431798): the git
 * side of that rename is `renameBranch` here; run-lifecycle.ts schedules it.
 */
import type { ProjectState, Store, ThreadState } from "../engine/store.ts";
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

export interface WorktreeRequest {
	baseRef: string;
	branch: string | null;
}

/** T3's `isTemporaryWorktreeBranch`: `t3code/` and 8 hex, trimmed and lower-cased (idx 52891971135). */
export function isTemporaryBranch(branch: unknown): boolean {
	return (
		typeof branch === "string" &&
		/^t3code\/[0-9a-f]{8}$/.test(branch.trim().toLowerCase())
	);
}

/** T3's server-invented name: `t3code/` and a random UUID's first 8 hex digits (idx 59486431798). */
function temporaryBranch(): string {
	return `t3code/${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

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
): void {
	const project = projectOf(store, thread);
	if (!project) return;
	const repo = repoOf(project);
	const type = strategy?.type;
	if (type === "worktree") {
		pending.set(thread, {
			baseRef: String(strategy?.baseRef ?? repo.current),
			branch: typeof strategy?.branch === "string" ? strategy.branch : null,
		});
		return;
	}
	const wt =
		type === "existing_worktree"
			? repo.worktrees.get(String(strategy?.worktreePath))
			: undefined;
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
	const base = resolveRef(repo, request.baseRef);
	if (!base) return `fatal: invalid reference: ${request.baseRef}`;
	const branch = request.branch ?? temporaryBranch();
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

/**
 * `git branch -m` of a thread's worktree branch, as T3's `renameBranch` does it: a name already
 * taken gets the first free `-1` … `-100` suffix (`resolveAvailableBranchName`, idx 55415394429).
 * Returns the name the branch now has, or undefined when there is nothing to rename.
 */
export function renameBranch(
	store: Store,
	thread: ThreadState,
	wanted: string,
): string | undefined {
	const project = projectOf(store, thread);
	const path = thread.app.worktreePath;
	if (!project || typeof path !== "string") return undefined;
	const repo = repoOf(project);
	const wt = repo.worktrees.get(path);
	const tree = wt && repo.branches.get(wt.branch);
	if (!wt || !tree) return undefined;
	if (wt.branch === wanted) return wanted;
	let name = wanted;
	for (let n = 1; repo.branches.has(name) && n <= 100; n += 1)
		name = `${wanted}-${n}`;
	if (repo.branches.has(name)) return undefined;
	repo.branches.delete(wt.branch);
	repo.branches.set(name, tree);
	wt.branch = name;
	return name;
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
	const paths = [...new Set([...tree.keys(), ...committed.keys()])].sort();
	return paths.filter((p) => tree.get(p) !== committed.get(p));
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
