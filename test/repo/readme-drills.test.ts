/**
 * The README's drills table shows what `bun run drills` prints: its columns are printed ones,
 * named as printed and in the printed order, and it has every count that shows a broken
 * delivery promise (a second id for a run, a lost event).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatTable } from "../../drills/lib/tally.ts";

const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");

const cells = (line: string) =>
	line
		.trim()
		.replace(/^\||\|$/g, "")
		.split("|")
		.map((c) => c.trim());

test("the README's drills table has the columns `bun run drills` prints", () => {
	const printed = (formatTable([]).split("\n")[0] ?? "").trim().split(/\s{2,}/);
	const lines = readme
		.slice(readme.indexOf("Latest `bun run drills`"))
		.split("\n");
	const first = lines.findIndex((l) => l.startsWith("|"));
	const end = lines.findIndex((l, i) => i > first && !l.startsWith("|"));
	const table = lines.slice(first, end);
	const head = cells(table[0] ?? "");
	expect(head[0]).toBe("drill");
	// In the printed order: each README column is found after the previous one.
	let at = -1;
	for (const column of head) {
		const index = printed.indexOf(column);
		expect(index, `README column "${column}"`).toBeGreaterThan(at);
		at = index;
	}
	for (const column of ["runs", "duplicates", "extra ids", "lost"])
		expect(head).toContain(column);
	// One row per drill `bun run drills` runs, each with a cell per column.
	const rows = table.slice(2);
	expect(rows).toHaveLength(7);
	for (const row of rows) expect(cells(row)).toHaveLength(head.length);
});
