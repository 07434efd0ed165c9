/** The audit as an operator reads it: `t3code-mcp audit --json` on a stack's state file. */
import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Stack } from "./stack.ts";

const ENTRY = join(import.meta.dir, "../../src/index.ts");

/** `t3code-mcp audit --json` on the stack's state file: one row a line, parsed. */
export function auditRows(stack: Stack): Record<string, unknown>[] {
	const config = join(stack.dir, `audit-${Math.random()}.toml`);
	writeFileSync(
		config,
		`[server]\nstate = ${JSON.stringify(stack.statePath)}\n`,
	);
	const run = Bun.spawnSync(["bun", ENTRY, "audit", "--json"], {
		env: { ...process.env, T3CODE_MCP_CONFIG: config },
	});
	expect(run.exitCode, run.stderr.toString()).toBe(0);
	return run.stdout
		.toString()
		.trim()
		.split("\n")
		.filter((l) => l !== "")
		.map((l) => JSON.parse(l) as Record<string, unknown>);
}
