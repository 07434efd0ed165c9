/**
 * `t3code-mcp sim`: run the simulator in the foreground until SIGINT/SIGTERM. Flags:
 * --host H --port P --token T --project TITLE=PATH (repeatable) --protocol 1|2|3 --step-ms N
 * --compat current|prerelease, --pairing (also print a single-use pairing link for `t3code-mcp pair`).
 * Bad flags print a clear message on stderr and exit with code 2; --help prints the usage, every
 * flag and every prompt the simulated agent understands on stdout and exits 0; an address it cannot listen on is one line and
 * exit 3, as for `serve`.
 */
import { simPromptLines } from "./agent/prompts.ts";
import { defaultProviders } from "./agent/providers.ts";
import { isSimCompat, SIM_COMPATS } from "./compat.ts";
import { startSim } from "./sim.ts";
import type { SimOptions, SimUsageWindow } from "./types.ts";

export class SimUsageError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "SimUsageError";
	}
}

/** Every flag: the parser, the usage line and `--help` all read this list. */
const SIM_FLAGS: readonly {
	flag: string;
	/** What follows the flag ("" for a switch). */
	value: string;
	does: string;
	repeat?: boolean;
}[] = [
	{ flag: "--host", value: "H", does: "listen address (default 127.0.0.1)" },
	{
		flag: "--port",
		value: "P",
		does: "listen port (default 3773; 0 picks a free one)",
	},
	{
		flag: "--token",
		value: "T",
		does: "the bearer clients send (default a random one, printed)",
	},
	{
		flag: "--project",
		value: "TITLE=PATH",
		does: "a project (repeatable; default demo=/srv/t3/demo)",
		repeat: true,
	},
	{
		flag: "--protocol",
		value: "1|2|3",
		does: "orchestration protocol (default 2; 3: newer than this connector)",
	},
	{
		flag: "--step-ms",
		value: "N",
		does: "pause between the agent's steps in ms (default 20)",
	},
	{
		flag: "--compat",
		value: SIM_COMPATS.join("|"),
		does: "current: released T3 0.1.x; prerelease: the pre-release V2 engine",
	},
	{
		flag: "--usage",
		value: "PROVIDER=KIND:USED_PERCENT[:RESETS_IN_MIN]",
		does: "a provider's usage window as T3 reports it (repeatable), e.g. claudeAgent=session:100:90",
		repeat: true,
	},
	{
		flag: "--pairing",
		value: "",
		does: "also print a single-use pairing link (for `t3code-mcp pair`)",
	},
];

const VALUED = new Set(SIM_FLAGS.filter((f) => f.value).map((f) => f.flag));

const USAGE = `usage: t3code-mcp sim ${SIM_FLAGS.map((f) => `[${f.flag}${f.value ? ` ${f.value}` : ""}]${f.repeat ? "..." : ""}`).join(" ")}`;

/** `sim --help`: the usage line, every flag and every prompt the simulated agent understands. */
export function simHelp(): string {
	const names = SIM_FLAGS.map(
		(f) => `${f.flag}${f.value ? ` ${f.value}` : ""}`,
	);
	const width = Math.max(...names.map((n) => n.length));
	return [
		USAGE,
		"",
		"A standalone simulated T3 Code server; prints its URL and token.",
		"",
		"Flags:",
		...SIM_FLAGS.map(
			(f, i) => `  ${(names[i] as string).padEnd(width)}  ${f.does}`,
		),
		"",
		"Prompts the simulated agent understands (anywhere in the message, any case):",
		...simPromptLines("  "),
		"",
	].join("\n");
}

/** `--help` / `-h`: not an error, the usage is the answer. */
export class SimHelpRequest extends Error {
	constructor() {
		super(USAGE);
		this.name = "SimHelpRequest";
	}
}

function integer(
	flag: string,
	value: string,
	min: number,
	max: number,
): number {
	const n = Number(value);
	if (!/^\d+$/.test(value) || n < min || n > max)
		throw new SimUsageError(
			`${flag} must be an integer from ${min} to ${max}, got "${value}"`,
		);
	return n;
}

/** `--usage <provider>=<kind>:<used_percent>[:<resets_in_min>]`, e.g. `claudeAgent=session:100:90`. */
export function parseUsage(value: string): SimUsageWindow {
	const m = /^([^=\s]+)=([a-z_]+):(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(value);
	const used = Number(m?.[3]);
	if (!m || used > 100)
		throw new SimUsageError(
			`--usage must look like PROVIDER=KIND:USED_PERCENT[:RESETS_IN_MIN] (percent 0-100), e.g. claudeAgent=session:100:90, got "${value}"`,
		);
	const providers = defaultProviders().map((p) => String(p.instanceId));
	if (!providers.includes(m[1] as string))
		throw new SimUsageError(
			`--usage: no provider "${m[1]}" in the simulator; one of ${providers.join(", ")}`,
		);
	return {
		provider: m[1] as string,
		kind: m[2] as string,
		usedPercent: used,
		...(m[4] === undefined ? {} : { resetsInMin: Number(m[4]) }),
	};
}

/** Pure flag parsing, exported for tests. Default port 3773 (T3 Code's usual port). */
export function parseSimFlags(
	argv: string[],
): SimOptions & { pairing?: boolean } {
	const options: SimOptions & { pairing?: boolean } = { port: 3773 };
	const projects: { title: string; workspaceRoot: string }[] = [];
	for (let i = 0; i < argv.length; i++) {
		const flag = argv[i] as string;
		const value = argv[i + 1];
		if (flag === "--help" || flag === "-h") throw new SimHelpRequest();
		if (flag === "--pairing") {
			options.pairing = true;
			continue;
		}
		if (!VALUED.has(flag)) {
			throw new SimUsageError(`unknown flag "${flag}"\n${USAGE}`);
		}
		if (value === undefined || value.startsWith("--"))
			throw new SimUsageError(`${flag} needs a value\n${USAGE}`);
		i++;
		if (flag === "--host") options.host = value;
		else if (flag === "--port") options.port = integer(flag, value, 0, 65535);
		else if (flag === "--token") options.token = value;
		else if (flag === "--usage")
			options.usage = [...(options.usage ?? []), parseUsage(value)];
		else if (flag === "--step-ms")
			options.stepMs = integer(flag, value, 0, 60_000);
		else if (flag === "--compat") {
			if (!isSimCompat(value))
				throw new SimUsageError(
					`--compat must be one of ${SIM_COMPATS.join(", ")}, got "${value}"`,
				);
			options.compat = value;
		} else if (flag === "--protocol") {
			if (value !== "1" && value !== "2" && value !== "3")
				throw new SimUsageError(`--protocol must be 1, 2 or 3, got "${value}"`);
			options.protocol = Number(value) as 1 | 2 | 3;
		} else {
			const eq = value.indexOf("=");
			if (eq <= 0 || eq === value.length - 1)
				throw new SimUsageError(
					`--project must look like TITLE=PATH, got "${value}"`,
				);
			projects.push({
				title: value.slice(0, eq),
				workspaceRoot: value.slice(eq + 1),
			});
		}
	}
	if (projects.length > 0) options.projects = projects;
	return options;
}

export async function runSimCommand(argv: string[]): Promise<void> {
	let options: ReturnType<typeof parseSimFlags>;
	try {
		options = parseSimFlags(argv);
	} catch (error) {
		if (error instanceof SimHelpRequest) {
			process.stdout.write(simHelp());
			process.exit(0);
		}
		if (!(error instanceof SimUsageError)) throw error;
		process.stderr.write(`sim: ${error.message}\n`);
		process.exit(2);
	}
	// Handlers go in before the URL is printed: a supervisor may signal as soon as it reads it.
	const stopped = new Promise<void>((resolve) => {
		const done = () => {
			process.off("SIGINT", done);
			process.off("SIGTERM", done);
			resolve();
		};
		process.on("SIGINT", done);
		process.on("SIGTERM", done);
	});
	const { pairing, ...simOptions } = options;
	let sim: Awaited<ReturnType<typeof startSim>>;
	try {
		sim = await startSim(simOptions);
	} catch (error) {
		// Cannot listen: one line and exit 3, as `serve` (never a stack trace).
		const code = (error as { code?: unknown })?.code;
		const listen =
			(typeof code === "string" &&
				/^E(ADDRINUSE|ADDRNOTAVAIL|INVAL|ACCES)$/.test(code)) ||
			(error instanceof Error && /Failed to start server/.test(error.message));
		if (!listen) throw error;
		process.stderr.write(
			`sim: ${simOptions.host ?? "127.0.0.1"}:${simOptions.port}: cannot listen there (an address this machine does not have, a name that does not resolve, or a port in use); pass --host with an address of this machine (such as 127.0.0.1) and --port with a free port (0 picks one)\n`,
		);
		process.exit(3);
	}
	process.stdout.write(
		`T3 simulator listening on ${sim.url}${sim.compat === "current" ? "" : ` (as the ${sim.compat} engine)`}\ntoken: ${sim.token}\n${pairing ? `pairing link: ${sim.pairingLink()}\n` : ""}`,
	);
	await stopped;
	await sim.stop();
}
