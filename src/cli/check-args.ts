/** The arguments of `check`: apart from commands.ts, which loads check.ts only when it runs. */
import type { ArgSpec } from "./args.ts";

export const CHECK_ARGS: ArgSpec = {
	usage: "t3code-mcp check [--json]",
	flags: { "--json": { value: false } },
};
