/**
 * The prompt list `sim --help` and the demo banner print is the one the agent matches: every
 * prompt text the scripts look for is listed, and every listed prompt picks its own script.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { SIM_PROMPTS, simPromptLines } from "./prompts.ts";

const here = (file: string) =>
	readFileSync(new URL(`./${file}`, import.meta.url), "utf8");

/** The prompt texts a script file matches: `includes("…")` literals and `*_PROMPT = "…"`. */
function matchedIn(source: string): string[] {
	const found: string[] = [];
	for (const m of source.matchAll(/\.includes\("([^"]+)"\)/g))
		found.push(m[1] as string);
	for (const m of source.matchAll(/_PROMPT = "([^"]+)"/g))
		found.push(m[1] as string);
	return found;
}

describe("the simulated agent's prompts", () => {
	test("every prompt a script matches is listed, and nothing else", () => {
		const listed = new Set(SIM_PROMPTS.map((p) => p.prompt));
		const matched = [
			"agent.ts",
			"parallel-scripts.ts",
			"preparation-failure.ts",
			"usage-limit.ts",
			"wake-run.ts",
		].flatMap((f) => matchedIn(here(f)));
		expect(matched.length).toBeGreaterThan(20);
		for (const prompt of matched) expect(listed).toContain(prompt);
		for (const prompt of listed) expect(matched).toContain(prompt);
	});

	test("the lines name each prompt once, quoted, with what it does, and what anything else does", () => {
		const lines = simPromptLines("  ");
		expect(lines).toHaveLength(SIM_PROMPTS.length + 1);
		for (const [i, p] of SIM_PROMPTS.entries()) {
			expect(lines[i]).toStartWith(`  "${p.prompt}"`);
			expect(lines[i]).toEndWith(p.does);
		}
		expect(lines.at(-1)).toStartWith("  anything else");
	});
});
