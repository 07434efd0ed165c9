/**
 * `t3code-mcp sim`: run the simulator in the foreground until SIGINT/SIGTERM. Flags:
 * --host H --port P --token T --project TITLE=PATH (repeatable) --protocol 1|2|3 --step-ms N
 * --compat current|prerelease, --pairing (also print a single-use pairing link for `t3code-mcp pair`).
 * Bad flags print a clear message on stderr and exit with code 2; --help prints the usage on
 * stdout and exits 0, as every other command's; an address it cannot listen on is one line and
 * exit 3, as for `serve`.
 */
import { isSimCompat, SIM_COMPATS } from "./compat.ts";
import { startSim } from "./sim.ts";
import type { SimOptions } from "./types.ts";

export class SimUsageError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "SimUsageError";
	}
}

const USAGE =
	"usage: t3code-mcp sim [--host H] [--port P] [--token T] [--project TITLE=PATH]... [--protocol 1|2|3] [--step-ms N] [--compat current|prerelease] [--pairing]";

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
		if (
			![
				"--host",
				"--port",
				"--token",
				"--project",
				"--protocol",
				"--step-ms",
				"--compat",
			].includes(flag)
		) {
			throw new SimUsageError(`unknown flag "${flag}"\n${USAGE}`);
		}
		if (value === undefined || value.startsWith("--"))
			throw new SimUsageError(`${flag} needs a value\n${USAGE}`);
		i++;
		if (flag === "--host") options.host = value;
		else if (flag === "--port") options.port = integer(flag, value, 0, 65535);
		else if (flag === "--token") options.token = value;
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
			process.stdout.write(`${USAGE}\n`);
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
