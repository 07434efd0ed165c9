/**
 * Every command of the command line, with the arguments it takes. `index.ts` parses each
 * command's arguments against its spec before running it, so an unknown flag or a stray
 * argument is exit 2 for every command. A new command is one entry here (and a line in
 * --help); its module is imported only when it runs, so `serve` starts without the others.
 */
import { resolve } from "node:path";
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
		// A copy of the state file beside a running server (store/backup.ts); no config file is
		// needed, only where `serve` keeps its state.
		name: "backup",
		args: BACKUP_ARGS,
		async run(args) {
			const [{ backupState, BackupError, describeBackup }, { load }] =
				await Promise.all([
					import("../store/backup.ts"),
					import("./run-server.ts"),
				]);
			const config = await load(process.env, { readFile: textOrEmpty });
			if (typeof config === "number") return config;
			try {
				const result = backupState(
					config.server.statePath,
					resolve(args.positionals[0] as string),
				);
				process.stdout.write(`${describeBackup(result)}\n`);
				return EXIT.ok;
			} catch (error) {
				if (!(error instanceof BackupError)) throw error;
				process.stderr.write(`t3code-mcp backup: ${error.message}\n`);
				return EXIT.failure;
			}
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

/** A config file that does not exist reads as an empty one (`backup` needs only `[server]`). */
async function textOrEmpty(path: string): Promise<string> {
	try {
		return await Bun.file(path).text();
	} catch (error) {
		if ((error as { code?: unknown }).code === "ENOENT") return "";
		throw error;
	}
}

export function findCommand(name: string): Command | undefined {
	return COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
}
