/**
 * The command line's grammar, shared by every command: each command declares the flags and the
 * number of positional arguments it takes, and anything else is a usage error (exit 2), never
 * silently ignored. `--flag value` and `--flag=value` both work; `--` ends the flags.
 */

export interface FlagSpec {
	/** Whether the flag takes a value (`--port 8000`); else it is a switch (`--json`). */
	value: boolean;
	/** May be given more than once (values collect in order). */
	repeat?: boolean;
}

export interface ArgSpec {
	/** As shown after "usage: ", e.g. `t3code-mcp check [--json]`. */
	usage: string;
	flags?: Record<string, FlagSpec>;
	/** Positional arguments, by name, in order; `min` of them are required. */
	positionals?: { names: string[]; min: number };
}

export interface ParsedArgs {
	/** Each flag given, with its values in order (a switch has the value "true"). */
	flags: Map<string, string[]>;
	positionals: string[];
	/** `--help` / `-h` was given: print help instead of running. */
	help: boolean;
}

export class UsageError extends Error {
	override name = "UsageError";
	constructor(
		message: string,
		readonly usage: string,
	) {
		super(message);
	}
}

/** @throws UsageError naming the first argument that does not fit `spec`. */
export function parseArgs(argv: readonly string[], spec: ArgSpec): ParsedArgs {
	const flags = new Map<string, string[]>();
	const positionals: string[] = [];
	const known = spec.flags ?? {};
	const names = spec.positionals?.names ?? [];
	const fail = (message: string): never => {
		throw new UsageError(message, spec.usage);
	};
	let help = false;
	let flagsEnded = false;
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i] as string;
		if (!flagsEnded && arg === "--") {
			flagsEnded = true;
			continue;
		}
		if (!flagsEnded && (arg === "--help" || arg === "-h")) {
			help = true;
			continue;
		}
		if (!flagsEnded && arg.startsWith("-") && arg !== "-") {
			const eq = arg.indexOf("=");
			const name = eq > 0 ? arg.slice(0, eq) : arg;
			const flag = Object.hasOwn(known, name) ? known[name] : undefined;
			if (flag === undefined) {
				const valid = Object.keys(known);
				fail(
					`unknown flag "${name}"${valid.length > 0 ? ` (valid: ${valid.join(", ")})` : " (it takes none)"}`,
				);
			}
			let value = "true";
			if (flag?.value) {
				const next = eq > 0 ? arg.slice(eq + 1) : argv[++i];
				if (next === undefined || (eq < 0 && next.startsWith("--")))
					fail(`${name} needs a value`);
				value = next as string;
			} else if (eq > 0) fail(`${name} takes no value`);
			const seen = flags.get(name);
			if (seen && !flag?.repeat) fail(`${name} given more than once`);
			flags.set(name, [...(seen ?? []), value]);
			continue;
		}
		if (positionals.length >= names.length)
			fail(
				names.length === 0
					? `unexpected argument "${arg}" (it takes none)`
					: `unexpected argument "${arg}" (it takes ${names.join(", ")})`,
			);
		positionals.push(arg);
	}
	const min = spec.positionals?.min ?? 0;
	if (!help && positionals.length < min)
		fail(`missing ${names.slice(positionals.length, min).join(", ")}`);
	return { flags, positionals, help };
}

/** The single value of a valued flag, or undefined when absent. */
export function flagValue(args: ParsedArgs, name: string): string | undefined {
	return args.flags.get(name)?.at(-1);
}

/** Whether a switch was given. */
export function hasFlag(args: ParsedArgs, name: string): boolean {
	return args.flags.has(name);
}
