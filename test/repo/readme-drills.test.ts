/**
 * The documented drills table (README.md or a docs/ page; today docs/benchmarks.md) shows what
 * `npm run drills` prints: its columns are printed ones, named as printed and in the printed
 * order, and it has every count that shows a broken delivery promise (a second id for a run, a
 * lost event).
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { formatTable } from "../../drills/lib/tally.ts";

const ROOT = join(import.meta.dir, "../..");
/** The README and every docs/ page, together: the documentation as one text. */
const readme = [
	"README.md",
	...readdirSync(join(ROOT, "docs"))
		.filter((f) => f.endsWith(".md"))
		.sort()
		.map((f) => join("docs", f)),
]
	.map((path) => readFileSync(join(ROOT, path), "utf8"))
	.join("\n");

const cells = (line: string) =>
	line
		.trim()
		.replace(/^\||\|$/g, "")
		.split("|")
		.map((c) => c.trim());

test("the documented drills table has the columns `npm run drills` prints", () => {
	const printed = (formatTable([]).split("\n")[0] ?? "").trim().split(/\s{2,}/);
	const at = readme.indexOf("Latest `npm run drills`");
	expect(at).toBeGreaterThanOrEqual(0);
	const lines = readme.slice(at).split("\n");
	const first = lines.findIndex((l) => l.startsWith("|"));
	const end = lines.findIndex((l, i) => i > first && !l.startsWith("|"));
	const table = lines.slice(first, end);
	const head = cells(table[0] ?? "");
	expect(head[0]).toBe("drill");
	// In the printed order: each documented column is found after the previous one.
	let previous = -1;
	for (const column of head) {
		const index = printed.indexOf(column);
		expect(index, `documented column "${column}"`).toBeGreaterThan(previous);
		previous = index;
	}
	for (const column of ["runs", "duplicates", "extra ids", "lost"])
		expect(head).toContain(column);
	// One row per drill `npm run drills` runs, each with a cell per column.
	const rows = table.slice(2);
	expect(rows).toHaveLength(8);
	for (const row of rows) expect(cells(row)).toHaveLength(head.length);
});
