/**
 * Everything a fresh clone runs (source, tests, benches, drills, scripts, CI, deploy files)
 * reads only files inside the repository: no `../shared`, no relative path climbing past the
 * root, no absolute path into the workspace the repository was developed in. /tmp and system
 * paths are fine.
 */
import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";

const ROOT = join(import.meta.dir, "../..");

/** Folders never scanned: installed or generated files, and the captured frames (data). */
const SKIP_DIRS = new Set([
	".git",
	"node_modules",
	"dist",
	"data",
	"reports",
	join("test", "fixtures"),
]);
const SELF = relative(ROOT, import.meta.path);
const SKIP_FILES = /(\.md|\.lock|package-lock\.json|\.snap)$/;

function scannedFiles(dir = ""): string[] {
	const out: string[] = [];
	for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
		const rel = dir === "" ? entry.name : join(dir, entry.name);
		// This file holds examples of what it forbids; `.git` is a pointer file in a worktree.
		if (rel === SELF || entry.name === ".git") continue;
		if (entry.isDirectory()) {
			if (!SKIP_DIRS.has(rel)) out.push(...scannedFiles(rel));
		} else if (entry.isFile() && !SKIP_FILES.test(entry.name)) {
			out.push(rel);
		}
	}
	return out;
}

/** `..` chains (`..`, `../..`, `../../x`) standing alone as a path, not inside `...`/`a..b`. */
const DOTDOT_CHAIN = /(?<![\w.])(?:\.\.\/)*\.\.(?![\w.])/g;
// Built from pieces so this file does not flag itself.
const SHARED = `..${"/"}shared`;
const WORKSPACE = /(?<![\w./-])\/work\//;

/** Why `text` (the content of `file`, relative to the root) escapes the repository, if it does. */
export function escapes(file: string, text: string): string[] {
	const problems: string[] = [];
	const depth = dirname(file) === "." ? 0 : dirname(file).split(sep).length;
	text.split("\n").forEach((line, i) => {
		const where = `${file}:${i + 1}`;
		if (line.includes(SHARED)) problems.push(`${where}: refers to ${SHARED}`);
		if (WORKSPACE.test(line))
			problems.push(`${where}: absolute workspace path`);
		for (const m of line.matchAll(DOTDOT_CHAIN)) {
			const ups = m[0].split("/").length;
			if (ups > depth) {
				problems.push(
					`${where}: "${m[0]}" climbs ${ups} levels from a file ${depth} deep`,
				);
			}
		}
	});
	return problems;
}

describe("paths stay inside the repository", () => {
	it("no scanned file refers outside the repository", () => {
		const files = scannedFiles();
		// The scan really covers the parts of the repository that run.
		for (const part of [
			"src/",
			"test/",
			"bench/",
			"drills/",
			"scripts/",
			".ci/",
		]) {
			expect(files.some((f) => f.startsWith(part))).toBe(true);
		}
		const problems = files.flatMap((f) =>
			escapes(f, readFileSync(join(ROOT, f), "utf8")),
		);
		expect(problems).toEqual([]);
	});

	it("the check catches what it is meant to", () => {
		expect(
			escapes("src/sim/x.ts", `new URL("${SHARED}/t3-protocol/", u)`),
		).toHaveLength(1);
		expect(escapes("src/sim/x.ts", `new URL("../../../x/", u)`)).toHaveLength(
			1,
		);
		expect(escapes("test/x.ts", `join(ROOT, "..", "y")`)).toHaveLength(0);
		expect(escapes("x.ts", `join(ROOT, "..", "y")`)).toHaveLength(1);
		expect(escapes(".ci/run", `cd "$(dirname "$0")/../.."`)).toHaveLength(1);
		expect(escapes("test/x.ts", `readFileSync("/work/main/x")`)).toHaveLength(
			1,
		);
		// Fine: inside the repository, /tmp, system paths, spread syntax, version ranges.
		expect(escapes("src/sim/x.ts", `import a from "../a.ts";`)).toEqual([]);
		expect(
			escapes(
				"test/x.ts",
				`"/tmp/x" "/usr/bin/env" [...a] "1..2" "/srv/work/x"`,
			),
		).toEqual([]);
	});
});
