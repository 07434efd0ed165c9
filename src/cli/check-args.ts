/**
 * The arguments of `check`, `audit` and `backup`: apart from commands.ts, which loads a
 * command's module only when it runs.
 */
import type { ArgSpec } from "./args.ts";

export const CHECK_ARGS: ArgSpec = {
	usage: "t3code-mcp check [--json]",
	flags: { "--json": { value: false } },
};

export const AUDIT_ARGS: ArgSpec = {
	usage:
		"t3code-mcp audit [--since DURATION|ISO] [--client NAME] [--thread ID] [--json]",
	flags: {
		"--since": { value: true },
		"--client": { value: true },
		"--thread": { value: true },
		"--json": { value: false },
	},
};

export const BACKUP_ARGS: ArgSpec = {
	usage: "t3code-mcp backup <file>",
	positionals: { names: ["<file>"], min: 1 },
};
