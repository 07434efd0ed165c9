/**
 * The agent skill (skills/t3code/SKILL.md) loads as Claude Code and Codex load Agent Skills:
 * YAML front matter with `name` (the folder's name: lowercase, digits, hyphens, ≤ 64) and a
 * `description` (≤ 1 024 characters) saying what it does and when to use it; then a body that
 * teaches the loop in order and names only tools this server has.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tools } from "../../src/tools/index.ts";

const FILE = join(import.meta.dir, "../../skills/t3code/SKILL.md");

test("SKILL.md: front matter, the loop in order, only real tools", () => {
	const text = readFileSync(FILE, "utf8");
	const match = text.match(/^---\n([\s\S]*?)\n---\n([\s\S]*)$/);
	expect(match).not.toBeNull();
	const [, front, body] = match as unknown as [string, string, string];
	const fields: Record<string, string> = Object.fromEntries(
		front.split("\n").map((line) => {
			const at = line.indexOf(":");
			return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
		}),
	);
	expect(Object.keys(fields).sort()).toEqual(["description", "name"]);
	expect(fields.name).toBe("t3code");
	expect(fields.name).toMatch(/^[a-z0-9-]{1,64}$/);
	const description = fields.description ?? "";
	expect(description.length).toBeGreaterThan(50);
	expect(description.length).toBeLessThanOrEqual(1024);
	expect(description).not.toMatch(/[<>]/);

	// Each step of the loop is taught after the one before it.
	let from = 0;
	for (const word of [
		"t3_machines",
		"t3_projects",
		"t3_dispatch",
		"worktree",
		"wait: true",
		"t3_wait",
		"t3_answer",
		"t3_diff",
	]) {
		const at = body.indexOf(word, from);
		expect([word, at >= 0]).toEqual([word, true]);
		from = at;
	}
	expect(body).toContain('workspace: "worktree"');

	const names = new Set(tools.map((t) => t.name));
	for (const [named] of body.matchAll(/\bt3_[a-z_]+/g))
		expect([named, names.has(named)]).toEqual([named, true]);
});
