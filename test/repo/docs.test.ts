/**
 * The README is a landing page (at most 400 lines) that links every page of docs/, and every
 * relative link in the README and in docs/ reaches a file of the repository and, with a
 * `#fragment`, a heading of that file.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const pages = readdirSync(join(ROOT, "docs"))
	.filter((f) => f.endsWith(".md"))
	.sort()
	.map((f) => `docs/${f}`);

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(text: string): string {
	return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
		.replace(/ /g, "-");
}

/** Every heading anchor of a markdown file. */
function anchors(path: string): Set<string> {
	const text = read(path).replace(/^```[\s\S]*?^```/gm, "");
	return new Set(
		[...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1] ?? "")),
	);
}

/** Why the relative links of `file` (relative to the root) do not resolve, if they do not. */
function brokenLinks(file: string): string[] {
	const problems: string[] = [];
	for (const [, target = ""] of prose(read(file)).matchAll(
		/\]\(([^)\s]+)\)/g,
	)) {
		if (/^[a-z]+:/i.test(target)) continue;
		const [path = "", fragment] = target.split("#");
		const resolved = path === "" ? file : normalize(join(dirname(file), path));
		if (resolved.startsWith("..") || !existsSync(join(ROOT, resolved))) {
			problems.push(`${file}: ${target}: no file ${resolved}`);
			continue;
		}
		if (fragment !== undefined && !anchors(resolved).has(fragment))
			problems.push(
				`${file}: ${target}: no heading #${fragment} in ${resolved}`,
			);
	}
	return problems;
}

describe("README and docs/", () => {
	test("the README is a landing page of at most 400 lines", () => {
		expect(read("README.md").split("\n").length - 1).toBeLessThanOrEqual(400);
	});

	test("the README links every docs page", () => {
		expect(pages.length).toBeGreaterThan(0);
		const readme = read("README.md");
		for (const page of pages) expect(readme).toContain(`](${page})`);
	});

	test("every relative link reaches a file and heading of the repository", () => {
		expect(["README.md", ...pages].flatMap(brokenLinks)).toEqual([]);
	});

	test("the link check catches what it is meant to", () => {
		expect(anchor("Bearer, Host and Origin checks")).toBe(
			"bearer-host-and-origin-checks",
		);
		expect(anchor("A session against the demo: dispatch → wait")).toBe(
			"a-session-against-the-demo-dispatch--wait",
		);
		expect(
			prose("see `[x](nowhere.md)` and\n```\n[y](nowhere.md)\n```\n"),
		).not.toContain("nowhere");
	});
});
