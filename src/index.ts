#!/usr/bin/env bun
/**
 * t3code-mcp command line: `serve` (default), `stdio`, `demo`, `sim`, `check`, `hook`, `backup`,
 * `healthcheck`, `--version`, `--help` (cli/commands.ts). The only module with process-wide side effects.
 */
import { parseArgs, UsageError } from "./cli/args.ts";
import { findCommand } from "./cli/commands.ts";
import { EXIT, HELP } from "./cli/help.ts";

async function main(argv: string[]): Promise<number> {
	const [name = "serve", ...rest] = argv;
	const command = findCommand(name);
	if (command === undefined) {
		process.stderr.write(`t3code-mcp: unknown command "${name}"\n\n${HELP}`);
		return EXIT.usage;
	}
	if (command.args === "own")
		return command.run(
			{ flags: new Map(), positionals: [], help: false },
			rest,
		);
	try {
		const args = parseArgs(rest, command.args);
		if (args.help) {
			process.stdout.write(`usage: ${command.args.usage}\n\n${HELP}`);
			return EXIT.ok;
		}
		return await command.run(args, rest);
	} catch (error) {
		if (!(error instanceof UsageError)) throw error;
		process.stderr.write(
			`t3code-mcp ${command.name}: ${error.message}\nusage: ${error.usage}\n`,
		);
		return EXIT.usage;
	}
}

main(process.argv.slice(2)).then(
	(code) => process.exit(code),
	(error) => {
		process.stderr.write(
			`t3code-mcp: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
		);
		process.exit(EXIT.failure);
	},
);
