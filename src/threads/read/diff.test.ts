import { describe, expect, test } from "bun:test";
import { pageOf, summarizeDiff } from "./diff.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("pageOf", () => {
	test("cuts after the last whole line that fits, and reads on from there", () => {
		const bytes = enc("aaaa\nbbbb\ncccc\n");
		const first = pageOf(bytes, 0, 12);
		expect(first).toEqual({ text: "aaaa\nbbbb\n", end: 10 });
		expect(pageOf(bytes, first.end, 12)).toEqual({ text: "cccc\n", end: 15 });
	});

	test("a line longer than a page is cut, never inside a UTF-8 character", () => {
		const bytes = enc(`${"é".repeat(10)}\n`);
		const page = pageOf(bytes, 0, 5);
		expect(page.end).toBe(4);
		expect(page.text).toBe("éé");
		const next = pageOf(bytes, page.end, 5);
		expect(next.text).toBe("éé");
	});

	test("the last page is whatever is left", () => {
		expect(pageOf(enc("ab\ncd"), 0, 60_000)).toEqual({
			text: "ab\ncd",
			end: 5,
		});
	});
});

describe("summarizeDiff", () => {
	test("counts added and removed lines per file, not the --- / +++ headers", () => {
		const diff = [
			"diff --git a/src/app.ts b/src/app.ts",
			"--- a/src/app.ts",
			"+++ b/src/app.ts",
			"@@ -1,2 +1,3 @@",
			" keep",
			"-old",
			"+new",
			"+more",
			"diff --git a/gone.txt b/gone.txt",
			"deleted file mode 100644",
			"--- a/gone.txt",
			"+++ /dev/null",
			"@@ -1 +0,0 @@",
			"--- a line that starts with dashes",
			"diff --git a/old name.md b/new name.md",
			"similarity index 90%",
			"rename from old name.md",
			"rename to new name.md",
			"",
		].join("\n");
		expect(summarizeDiff(diff)).toEqual([
			{ path: "src/app.ts", additions: 2, deletions: 1 },
			{ path: "gone.txt", additions: 0, deletions: 1 },
			{ path: "new name.md", additions: 0, deletions: 0 },
		]);
		expect(summarizeDiff("")).toEqual([]);
	});
});
