/**
 * The simulated agent's workspace: the in-memory file tree a thread works in (never the disk,
 * so a `--project` directory is never written): a worktree's (worktrees.ts), else one of its
 * own whose edits also reach the project's root checkout; a snapshot per checkpoint (turn count = run ordinal,
 * 0 = the tree when the thread was created), and the unified diffs `getTurnDiff` /
 * `getFullThreadDiff` serve between two snapshots (PROTOCOL.md §5).
 */
import type { ThreadState } from "../engine/store.ts";

export type Tree = Map<string, string>;

interface ThreadWorkspace {
	files: Tree;
	/** Turn count → the tree captured by that checkpoint. */
	checkpoints: Map<number, Tree>;
	/**
	 * A root-checkout thread's edits also land here: the project's root checkout (worktrees.ts).
	 * Its own `files` stay its own, so its diffs show its own runs' changes (as before worktrees).
	 */
	mirror?: Tree;
}

/** What every new thread's checkout holds before its first run. */
export const SEED: [string, string][] = [
	["README.md", "# demo\n\nA project the T3 simulator pretends to work on.\n"],
	[
		"src/app.ts",
		'export function greet(name: string): string {\n\treturn "Hello, " + name;\n}\n\nconsole.log(greet("world"));\n',
	],
];

const workspaces = new WeakMap<ThreadState, ThreadWorkspace>();

function workspaceOf(thread: ThreadState): ThreadWorkspace {
	let ws = workspaces.get(thread);
	if (!ws) {
		const files: Tree = new Map(SEED);
		ws = { files, checkpoints: new Map([[0, new Map(files)]]) };
		workspaces.set(thread, ws);
	}
	return ws;
}

/** The thread works in `files` from now on; its turn 0 is the tree as it is now. */
export function attachTree(thread: ThreadState, files: Tree): void {
	workspaces.set(thread, {
		files,
		checkpoints: new Map([[0, new Map(files)]]),
	});
}

/** A root-checkout thread: its edits also change the project's root checkout `root`. */
export function mirrorInto(thread: ThreadState, root: Tree): void {
	workspaceOf(thread).mirror = root;
}

const lines = (text: string | undefined): string[] =>
	text ? text.replace(/\n$/, "").split("\n") : [];

/**
 * Applies a file change the agent reports: removes `deletions` lines from the end and appends
 * `additions` new lines, so the change's counts and the diff always agree.
 */
export function editFile(
	thread: ThreadState,
	path: string,
	additions: number,
	deletions: number,
	runOrdinal: number,
): "added" | "modified" | "deleted" {
	const ws = workspaceOf(thread);
	if (ws.mirror)
		applyEdit(ws.mirror, path, additions, deletions, `run ${runOrdinal}`);
	return applyEdit(
		ws.files,
		path,
		additions,
		deletions,
		`run ${runOrdinal}${
			// On a worktree the line names its branch, so parallel edits of one file differ.
			thread.app.worktreePath ? ` on ${String(thread.app.branch)}` : ""
		}`,
	);
}

function applyEdit(
	files: Tree,
	path: string,
	additions: number,
	deletions: number,
	by: string,
): "added" | "modified" | "deleted" {
	const before = files.get(path);
	const kept = lines(before);
	kept.splice(Math.max(0, kept.length - deletions), deletions);
	for (let i = 1; i <= additions; i += 1)
		kept.push(`${path} line ${i} written by ${by}`);
	if (kept.length === 0 && before !== undefined) {
		files.delete(path);
		return "deleted";
	}
	files.set(path, `${kept.join("\n")}\n`);
	return before === undefined ? "added" : "modified";
}

/** The checkpoint a completed run captures. */
export function captureCheckpoint(
	thread: ThreadState,
	turnCount: number,
): void {
	const ws = workspaceOf(thread);
	ws.checkpoints.set(turnCount, new Map(ws.files));
}

export type DiffResult = { diff: string } | { unavailable: number };

/**
 * The unified diff between two checkpoints, or the turn count whose checkpoint ref is missing.
 * Turn 0 is refused as a starting point like the real server does (OBSERVED.md §5.8, §6.4 #37)
 * unless `allowBaseline` (getFullThreadDiff, which diffs from the thread's start).
 */
export function diffBetween(
	thread: ThreadState,
	from: number,
	to: number,
	allowBaseline: boolean,
): DiffResult {
	const ws = workspaceOf(thread);
	if (from === 0 && !allowBaseline) return { unavailable: 0 };
	if (to === 0) return { unavailable: 0 };
	const a = ws.checkpoints.get(from);
	if (!a) return { unavailable: from };
	const b = ws.checkpoints.get(to);
	if (!b) return { unavailable: to };
	const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
	return {
		diff: paths.map((p) => fileDiff(p, a.get(p), b.get(p))).join(""),
	};
}

const CONTEXT = 3;

/** One file's git-style diff: one hunk around the changed middle (prefix and suffix trimmed). */
function fileDiff(
	path: string,
	before: string | undefined,
	after: string | undefined,
): string {
	if (before === after) return "";
	const a = lines(before);
	const b = lines(after);
	let head = 0;
	while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
	let tail = 0;
	while (
		tail < a.length - head &&
		tail < b.length - head &&
		a[a.length - 1 - tail] === b[b.length - 1 - tail]
	)
		tail += 1;
	const start = Math.max(0, head - CONTEXT);
	const endA = Math.min(a.length, a.length - tail + CONTEXT);
	const endB = Math.min(b.length, b.length - tail + CONTEXT);
	const out = [`diff --git a/${path} b/${path}`];
	if (before === undefined) out.push("new file mode 100644");
	if (after === undefined) out.push("deleted file mode 100644");
	out.push(before === undefined ? "--- /dev/null" : `--- a/${path}`);
	out.push(after === undefined ? "+++ /dev/null" : `+++ b/${path}`);
	const range = (s: number, n: number) =>
		n === 0 ? `${s},0` : n === 1 ? `${s + 1}` : `${s + 1},${n}`;
	out.push(
		`@@ -${range(start, endA - start)} +${range(start, endB - start)} @@`,
	);
	for (let i = start; i < head; i += 1) out.push(` ${a[i]}`);
	for (let i = head; i < a.length - tail; i += 1) out.push(`-${a[i]}`);
	for (let i = head; i < b.length - tail; i += 1) out.push(`+${b[i]}`);
	for (let i = a.length - tail; i < endA; i += 1) out.push(` ${a[i]}`);
	return `${out.join("\n")}\n`;
}
