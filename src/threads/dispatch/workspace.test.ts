import { describe, expect, test } from "bun:test";
import type { ProjectShell, ThreadShell } from "../../t3/model.ts";
import {
	chosenTemporary,
	defaultWorkspace,
	isTemporaryBranch,
	knownWorktrees,
	refProblem,
	temporaryBranchName,
	workspaceStrategy,
} from "./workspace.ts";

const project = {
	id: "p1",
	title: "demo",
	workspaceRoot: "/srv/demo",
	defaultModelSelection: null,
} as ProjectShell;
const shell = (over: Partial<ThreadShell>) =>
	({ id: "t", projectId: "p1", ...over }) as ThreadShell;

describe("refProblem (git check-ref-format)", () => {
	test("accepts ordinary branch and ref names", () => {
		for (const ok of [
			"main",
			"feature/a",
			"origin/main",
			"v1.2",
			"HEAD",
			"a-b_c",
		])
			expect([ok, refProblem(ok)]).toEqual([ok, null]);
	});
	test("refuses each rule, saying which", () => {
		for (const [bad, why] of [
			["", "empty"],
			["-x", "start with '-'"],
			["a b", "spaces"],
			["a~1", "~"],
			["a^", "^"],
			["a:b", ":"],
			["a?", "?"],
			["a*", "*"],
			["a[b", "["],
			["a\\b", "\\"],
			["a\u0007b", "control"],
			["a..b", "'..'"],
			["a@{1}", "'@{'"],
			["@", "'@'"],
			["/a", "'/'"],
			["a/", "'/'"],
			["a//b", "'//'"],
			["a.", "end with '.'"],
			["a/.b", "start with '.'"],
			[".a", "start with '.'"],
			["a.lock", ".lock"],
			["a.lock/b", ".lock"],
			["x".repeat(201), "over the limit of 200"],
		] as const)
			expect([bad, refProblem(bad)]).toEqual([
				bad,
				expect.stringContaining(why),
			]);
		expect(refProblem("x".repeat(200))).toBeNull();
	});
});

describe("workspaceStrategy", () => {
	test("defaults: the project's defaultThreadEnvMode, else root; a worktree from HEAD", () => {
		expect(defaultWorkspace(project)).toBe("root");
		expect(workspaceStrategy({}, project, [])).toEqual({ type: "root" });
		const wt = { ...project, defaultThreadEnvMode: "worktree" };
		expect(defaultWorkspace(wt)).toBe("worktree");
		// Without a branch: a temporary t3code/<8 hex> name, as T3's app sends (T3 renames it).
		expect(
			workspaceStrategy({}, wt, [], "0A1B2C3D-4e5f-6789-abcd-ef0123456789"),
		).toEqual({
			type: "worktree",
			baseRef: "HEAD",
			branch: "t3code/0a1b2c3d",
		});
		expect(
			workspaceStrategy(
				{ workspace: "worktree", base_ref: "develop", branch: "x/y" },
				project,
				[],
			),
		).toEqual({ type: "worktree", baseRef: "develop", branch: "x/y" });
	});
	test("temporary branches: T3's t3code/<8 hex> shape, whoever made the name", () => {
		const made = workspaceStrategy({ workspace: "worktree" }, project, []);
		expect(made.branch).toEqual(expect.stringMatching(/^t3code\/[0-9a-f]{8}$/));
		expect(isTemporaryBranch(made.branch as string)).toBe(true);
		// An id with too few hex digits still gives 8, the same each time.
		expect(temporaryBranchName("id-1")).toMatch(/^t3code\/[0-9a-f]{8}$/);
		expect(temporaryBranchName("id-1")).toBe(temporaryBranchName("id-1"));
		expect(temporaryBranchName("id-1")).not.toBe(temporaryBranchName("id-2"));
		for (const name of ["t3code/abcdef12", " T3CODE/ABCDEF12 "])
			expect([name, isTemporaryBranch(name)]).toEqual([name, true]);
		for (const name of [
			"t3code/abcdef1",
			"t3code/abcdef123",
			"t3code/add-login",
			"feature/abcdef12",
			"edit-a-file",
		])
			expect([name, isTemporaryBranch(name)]).toEqual([name, false]);
		expect(isTemporaryBranch(null)).toBe(false);
	});
	test("branch_temporary: only the name the connector chose at the launch", () => {
		const id = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
		const launch = (branch: string) =>
			JSON.stringify({ workspaceStrategy: { type: "worktree", branch } });
		const chosen = temporaryBranchName(id);
		expect(chosenTemporary(chosen, id, launch(chosen))).toBe(true);
		// T3 renamed it: final.
		expect(chosenTemporary("feature/login", id, launch(chosen))).toBe(false);
		// A caller's own temporary-looking name, or a thread this connector did not launch.
		expect(
			chosenTemporary("t3code/deadbeef", id, launch("t3code/deadbeef")),
		).toBe(false);
		expect(chosenTemporary(chosen, id, undefined)).toBe(false);
	});
	test("an existing worktree only where a thread of the project reports it", () => {
		const threads = [
			shell({ worktreePath: "/srv/demo.worktrees/a" }),
			shell({ worktreePath: "/srv/demo" }),
			shell({ projectId: "p2", worktreePath: "/srv/other.worktrees/b" }),
		];
		expect(knownWorktrees(project, threads)).toEqual(["/srv/demo.worktrees/a"]);
		expect(
			workspaceStrategy(
				{ worktree_path: "/srv/demo.worktrees/a" },
				project,
				threads,
			),
		).toEqual({
			type: "existing_worktree",
			worktreePath: "/srv/demo.worktrees/a",
		});
		expect(() =>
			workspaceStrategy(
				{ worktree_path: "/srv/other.worktrees/b" },
				project,
				threads,
			),
		).toThrow(
			'worktree_path: "/srv/other.worktrees/b" is not a worktree T3 reports',
		);
		expect(() =>
			workspaceStrategy(
				{ worktree_path: "/srv/demo.worktrees/a", base_ref: "main" },
				project,
				threads,
			),
		).toThrow("base_ref: not used with worktree_path");
		expect(() =>
			workspaceStrategy({ workspace: "root", base_ref: "main" }, project, []),
		).toThrow('base_ref: only used with workspace "worktree"');
	});
});
