/**
 * Layering (issue 9): use cases (src/threads) raise their own error type and only the MCP layer
 * turns errors into tool results; the T3 protocol client (src/t3) knows nothing of MCP. So no
 * module below the MCP layer imports from src/mcp or src/tools.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const SRC = join(import.meta.dir, "../../src");
/** Domains below the MCP layer. */
const LOWER = ["threads", "t3", "store", "events", "fleet", "config", "util"];
const IMPORT = /(?:from|import)\s*\(?\s*["']([^"']+)["']/g;

function files(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
		e.isDirectory()
			? files(join(dir, e.name))
			: e.name.endsWith(".ts")
				? [join(dir, e.name)]
				: [],
	);
}

test("no use case, protocol or store module imports the MCP layer", () => {
	const offending: string[] = [];
	for (const domain of LOWER) {
		for (const file of files(join(SRC, domain))) {
			for (const [, spec] of readFileSync(file, "utf8").matchAll(IMPORT)) {
				if (
					/(^|\/)(mcp|tools)\//.test(spec ?? "") ||
					spec?.includes("@modelcontextprotocol")
				)
					offending.push(`${file.slice(SRC.length + 1)} imports ${spec}`);
			}
		}
	}
	expect(offending).toEqual([]);
});
