/**
 * Every command of the command line, with the arguments it takes. `index.ts` parses each
 * command's arguments against its spec before running it, so an unknown flag or a stray
 * argument is exit 2 for every command. A new command is one entry here (and a line in
 * --help); its module is imported only when it runs, so `serve` starts without the others.
 */
import type { ArgSpec, ParsedArgs } from "./args.ts";
import { AUDIT_ARGS, BACKUP_ARGS, CHECK_ARGS } from "./check-args.ts";
import { EXIT, HELP } from "./help.ts";
import { HOOK_ARGS } from "./hook-args.ts";

export interface Command {
	name: string;
	aliases?: string[];
	/** The arguments it takes; "own" when the command parses them itself (`sim`). */
	args: ArgSpec | "own";
	run(args: ParsedArgs, argv: string[]): Promise<number>;
}

const none = (name: string): ArgSpec => ({ usage: `t3code-mcp ${name}` });

export const COMMANDS: Command[] = [
	{
		name: "serve",
		args: none("serve"),
		async run() {
			const { runServe } = await import("./run-server.ts");
			return runServe();
		},
	},
	// The simulator is loaded only by the commands that use it: `serve` starts faster.
	{
		name: "demo",
		args: none("demo"),
		async run() {
			const { runDemo } = await import("./demo.ts");
			return runDemo();
		},
	},
	{
		name: "sim",
		args: "own",
		async run(_, argv) {
			const { runSimCommand } = await import("../sim/cli.ts");
			await runSimCommand(argv);
			return EXIT.ok;
		},
	},
	{
		name: "check",
		args: CHECK_ARGS,
		async run(_, argv) {
			const { runCheck } = await import("./check.ts");
			return runCheck(argv);
		},
	},
	{
		// Parses its own arguments, so no usage error can echo the pairing link (a secret).
		name: "pair",
		args: "own",
		async run(_, argv) {
			const { runPair } = await import("./pair.ts");
			return runPair(argv);
		},
	},
	{
		name: "stdio",
		args: none("stdio"),
		async run() {
			const { runStdio } = await import("./stdio.ts");
			return runStdio();
		},
	},
	{
		name: "audit",
		args: AUDIT_ARGS,
		async run(args) {
			const { runAudit } = await import("./audit.ts");
			return runAudit(args);
		},
	},
	{
		name: "backup",
		args: BACKUP_ARGS,
		async run(args) {
			const { runBackup } = await import("./backup.ts");
			return runBackup(args);
		},
	},
	{
		name: "hook",
		args: HOOK_ARGS,
		async run(args) {
			const { runHook } = await import("./hook.ts");
			return runHook(args);
		},
	},
	{
		name: "healthcheck",
		args: none("healthcheck"),
		async run() {
			const { runHealthcheck } = await import("./healthcheck.ts");
			return runHealthcheck();
		},
	},
	{
		name: "--version",
		aliases: ["-v", "version"],
		args: none("--version"),
		async run() {
			const { VERSION } = await import("../version.ts");
			process.stdout.write(`${VERSION}\n`);
			return EXIT.ok;
		},
	},
	{
		name: "--help",
		aliases: ["-h", "help"],
		args: none("--help"),
		async run() {
			process.stdout.write(HELP);
			return EXIT.ok;
		},
	},
];

export function findCommand(name: string): Command | undefined {
	return COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
}
