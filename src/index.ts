#!/usr/bin/env bun
/**
 * t3code-mcp command line: `serve` (default), `stdio`, `demo`, `sim`, `check`, `healthcheck`,
 * `--version`, `--help`. The only module with process-wide side effects.
 */
import { runHealthcheck } from "./cli/healthcheck.ts";
import { EXIT, HELP } from "./cli/help.ts";
import { runServe } from "./cli/run-server.ts";
import { VERSION } from "./version.ts";

async function main(argv: string[]): Promise<number> {
	const [command = "serve", ...rest] = argv;
	switch (command) {
		case "serve":
			return runServe();
		// The simulator is loaded only by the commands that use it: `serve` starts faster.
		case "demo": {
			const { runDemo } = await import("./cli/demo.ts");
			return runDemo();
		}
		case "sim": {
			const { runSimCommand } = await import("./sim/cli.ts");
			await runSimCommand(rest);
			return EXIT.ok;
		}
		case "check": {
			const { runCheck } = await import("./cli/check.ts");
			return runCheck(rest);
		}
		case "stdio": {
			const { runStdio } = await import("./cli/stdio.ts");
			return runStdio();
		}
		case "healthcheck":
			return runHealthcheck();
		case "--version":
		case "-v":
		case "version":
			process.stdout.write(`${VERSION}\n`);
			return EXIT.ok;
		case "--help":
		case "-h":
		case "help":
			process.stdout.write(HELP);
			return EXIT.ok;
		default:
			process.stderr.write(
				`t3code-mcp: unknown command "${command}"\n\n${HELP}`,
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
