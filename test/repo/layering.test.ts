/**
 * Layering and rooms (issues 9 and 24). The layers, top down: `cli/` and `index.ts` start things;
 * `http/`, `mcp/` and `tools/` speak to MCP clients; everything else (services, threads, t3,
 * store, events, tasks, fleet, config, sim, util) is lower and never imports them, so the T3
 * protocol client knows nothing of MCP and use cases raise their own errors. No value-import
 * cycles anywhere (type-only imports may cross), no crowded folder, no oversized file.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = join(import.meta.dir, "../../src");
const UPPER = ["http", "mcp", "tools", "cli"];
/** A static import or re-export with its clause (group 2: `type`, group 3: clause, group 4: spec). */
const STATIC =
	/^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?["']([^"']+)["']/gm;
const DYNAMIC = /import\(\s*["']([^"']+)["']\s*\)/g;
const ALL_TYPES =
	/^\{\s*(type\s+[\w$]+\s*(as\s+[\w$]+)?\s*,?\s*)+\}\s+from\s+$/;

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
		e.isDirectory()
			? sources(join(dir, e.name))
			: /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)
				? [join(dir, e.name)]
				: [],
	);
}

const FILES = sources(SRC);
const rel = (file: string) => relative(SRC, file);

/** Every module a file imports: `value` false when only types cross. */
function imports(file: string): { spec: string; value: boolean }[] {
	const text = readFileSync(file, "utf8");
	const found: { spec: string; value: boolean }[] = [];
	for (const m of text.matchAll(STATIC)) {
		const clause = m[3] ?? "";
		found.push({
			spec: m[4] ?? "",
			value: !m[2] && !ALL_TYPES.test(clause),
		});
	}
	for (const m of text.matchAll(DYNAMIC))
		found.push({ spec: m[1] ?? "", value: true });
	return found;
}

function target(file: string, spec: string): string | undefined {
	if (!spec.startsWith(".")) return undefined;
	const path = resolve(dirname(file), spec);
	return /\.tsx?$/.test(path) ? path : `${path}.ts`;
}

const isUpper = (file: string) =>
	rel(file) === "index.ts" || UPPER.includes(rel(file).split("/")[0] ?? "");

test("no lower module imports the http, mcp, tools or cli layer, nor the MCP SDK", () => {
	const offending: string[] = [];
	for (const file of FILES) {
		if (isUpper(file)) continue;
		for (const { spec, value } of imports(file)) {
			const to = target(file, spec);
			// The SDK's types may describe a result; its code stays in the MCP layer.
			const sdk = spec.includes("@modelcontextprotocol") && value;
			if ((to && isUpper(to)) || sdk)
				offending.push(`${rel(file)} imports ${spec}`);
		}
	}
	expect(offending).toEqual([]);
});

test("pool/ is beneath threads/: it imports none of threads/, tools/, mcp/, http/ or console/", () => {
	const above = ["threads", "tools", "mcp", "http", "console", "cli"];
	const offending: string[] = [];
	for (const file of FILES) {
		if (!rel(file).startsWith("pool/")) continue;
		for (const { spec } of imports(file)) {
			const to = target(file, spec);
			if (to && above.includes(rel(to).split("/")[0] ?? ""))
				offending.push(`${rel(file)} imports ${spec}`);
		}
	}
	expect(FILES.some((f) => rel(f).startsWith("pool/"))).toBe(true);
	expect(offending).toEqual([]);
});

test("console/ reads and acts through the services: it imports none of http/, mcp/, tools/ or cli/, and of t3/ only the machine's interface and model", () => {
	const above = ["http", "mcp", "tools", "cli"];
	const t3Allowed = ["t3/machine-api.ts", "t3/model.ts"];
	const offending: string[] = [];
	for (const file of FILES) {
		if (!rel(file).startsWith("console/")) continue;
		for (const { spec } of imports(file)) {
			const to = target(file, spec);
			if (!to) continue;
			const room = rel(to).split("/")[0] ?? "";
			if (
				above.includes(room) ||
				(room === "t3" && !t3Allowed.includes(rel(to)))
			)
				offending.push(`${rel(file)} imports ${spec}`);
		}
	}
	expect(FILES.some((f) => rel(f) === "console/routes.tsx")).toBe(true);
	expect(offending).toEqual([]);
});

/** The value imports between source files, by file. */
function valueEdges(): Map<string, string[]> {
	const edges = new Map<string, string[]>();
	for (const file of FILES)
		edges.set(
			rel(file),
			imports(file)
				.filter((i) => i.value)
				.map((i) => target(file, i.spec))
				.filter((t): t is string => t !== undefined && t !== file)
				.map(rel),
		);
	return edges;
}

/** Strongly connected groups (Tarjan) of more than one node: the cycles. */
function cycles(edges: Map<string, string[]>): string[][] {
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const onStack = new Set<string>();
	const groups: string[][] = [];
	const visit = (v: string) => {
		index.set(v, index.size);
		low.set(v, index.get(v) ?? 0);
		stack.push(v);
		onStack.add(v);
		for (const w of edges.get(v) ?? []) {
			if (!edges.has(w)) continue;
			if (!index.has(w)) {
				visit(w);
				low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
			} else if (onStack.has(w))
				low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
		}
		if (low.get(v) !== index.get(v)) return;
		const group: string[] = [];
		for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
			onStack.delete(w);
			group.push(w);
			if (w === v) break;
		}
		if (group.length > 1) groups.push(group.sort());
	};
	for (const v of edges.keys()) if (!index.has(v)) visit(v);
	return groups;
}

test("no value-import cycle in src/ (type-only imports may cross)", () => {
	expect(cycles(valueEdges())).toEqual([]);
});

test("the checks can fail: a three-file cycle is found, an all-types clause is not a value", () => {
	const edges = new Map([
		["a.ts", ["b.ts"]],
		["b.ts", ["c.ts"]],
		["c.ts", ["a.ts"]],
		["d.ts", ["a.ts"]],
	]);
	expect(cycles(edges)).toEqual([["a.ts", "b.ts", "c.ts"]]);
	expect(ALL_TYPES.test("{ type A, type B as C } from ")).toBe(true);
	expect(ALL_TYPES.test("{ a, type B } from ")).toBe(false);
});

test("rooms: at most 20 source files in any folder, none over 550 lines", () => {
	const perFolder = new Map<string, number>();
	for (const file of FILES)
		perFolder.set(
			rel(dirname(file)) || ".",
			(perFolder.get(rel(dirname(file)) || ".") ?? 0) + 1,
		);
	const crowded = [...perFolder].filter(([, n]) => n > 20);
	const long = FILES.map(
		(f) => [rel(f), readFileSync(f, "utf8").split("\n").length] as const,
	).filter(([, n]) => n > 550);
	expect({ crowded, long }).toEqual({ crowded: [], long: [] });
});
