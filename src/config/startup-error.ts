/**
 * A start-up problem the operator fixes outside the config file's syntax: a state file that
 * cannot be used, a port in use. `serve` and `stdio` print it as one line (what, what is wrong,
 * what to do) and exit 3, like a configuration error; never a stack trace.
 */
export class StartupError extends Error {
	override name = "StartupError";
	constructor(
		/** The file or address concerned. */
		readonly subject: string,
		/** What is wrong with it. */
		readonly problem: string,
		/** What to do. */
		readonly fix: string,
	) {
		super(`${subject}: ${problem}; ${fix}`);
	}
}
