/**
 * The one error configuration loading throws. It gathers every problem found (file and env) so a
 * user fixes them in one pass; each message line names the file (or env variable), the key path
 * and what was expected. Secret values are never rendered.
 */
import { hasUserinfo } from "./values.ts";

export interface ConfigProblem {
	/** The config file as the user named it; undefined for an environment variable. */
	file: string | undefined;
	/** Key path like `machines.mac.projects[2]`, or the env variable name. */
	key: string;
	/** What would have been accepted, e.g. `an integer 0-65535`. */
	expected: string;
	/** The text after `<file>: <key>: `. */
	message: string;
}

export class ConfigError extends Error {
	override name = "ConfigError";
	readonly problems: ConfigProblem[];
	/** The config file (absolute) when known, else the first problem's file. */
	readonly file: string | undefined;
	/** Of the first problem. */
	readonly key: string;
	/** Of the first problem. */
	readonly expected: string;

	constructor(problems: ConfigProblem[], file?: string) {
		super(problems.map(formatProblem).join("\n"));
		this.problems = problems;
		const first = problems[0];
		this.file = file ?? first?.file;
		this.key = first?.key ?? "";
		this.expected = first?.expected ?? "";
	}
}

/** One line: `<file>: <key>: <message>`, or `<ENV_VAR>: <message>`. */
function formatProblem(p: ConfigProblem): string {
	const where = p.key === "" ? "" : `${p.key}: `;
	return `${p.file === undefined ? "" : `${p.file}: `}${where}${p.message}`;
}

/** A problem whose message is `expected <expected>, got <rendered value>` (or `missing; …`). */
export function expectedProblem(
	file: string | undefined,
	key: string,
	expected: string,
	value: unknown,
	opts: { secret?: boolean } = {},
): ConfigProblem {
	let message: string;
	if (value === undefined) message = `missing; expected ${expected}`;
	// A URL with user:password@ carries a credential, whatever key it was given for.
	else if (opts.secret || (typeof value === "string" && hasUserinfo(value)))
		message = `expected ${expected}`;
	else message = `expected ${expected}, got ${renderValue(value)}`;
	return { file, key, expected, message };
}

const MAX_SHOWN = 80;
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** How a TOML or env value appears in a message: strings quoted, tables and arrays named. */
function renderValue(value: unknown): string {
	if (typeof value === "string") {
		// A URL's query and fragment may carry a secret: never echoed.
		const query = URL_SCHEME.test(value) ? value.search(/[?#]/) : -1;
		const bare = query === -1 ? value : `${value.slice(0, query)}?…`;
		const shown =
			bare.length > MAX_SHOWN ? `${bare.slice(0, MAX_SHOWN)}…` : bare;
		return JSON.stringify(shown);
	}
	if (Array.isArray(value))
		return value.length === 0 ? "an empty array" : "an array";
	if (value === null) return "null";
	if (typeof value === "object") {
		// Bun.TOML gives datetimes as Temporal objects, whose toString is the TOML text.
		const proto = Object.getPrototypeOf(value);
		if (proto === Object.prototype || proto === null) return "a table";
		return `a datetime (${String(value)})`;
	}
	return String(value);
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** A zod-style path as a TOML key path: `machines.mac.projects[2]`, odd keys quoted. */
export function keyPath(path: readonly PropertyKey[]): string {
	let out = "";
	for (const part of path) {
		if (typeof part === "number") out += `[${part}]`;
		else {
			const name = String(part);
			out += `${out === "" ? "" : "."}${BARE_KEY.test(name) ? name : JSON.stringify(name)}`;
		}
	}
	return out;
}
