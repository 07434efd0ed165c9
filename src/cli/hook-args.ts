/** The arguments of `hook`: apart from hook.ts, which commands.ts loads only when it runs. */
import type { ArgSpec } from "./args.ts";

export const HOOK_ARGS: ArgSpec = {
	usage: "t3code-mcp hook secret|test",
	positionals: { names: ["secret|test"], min: 1 },
};
