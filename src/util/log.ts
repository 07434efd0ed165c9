/**
 * Structured JSON logs, one line per entry on stderr. Fields whose key looks like a secret
 * (token, secret, authorization, ticket) are replaced before writing, so a careless call
 * site cannot leak a credential.
 */
import type { LogLevel } from "../config/types.ts";

export interface Logger {
	debug(msg: string, fields?: Record<string, unknown>): void;
	info(msg: string, fields?: Record<string, unknown>): void;
	warn(msg: string, fields?: Record<string, unknown>): void;
	error(msg: string, fields?: Record<string, unknown>): void;
	/** A logger that adds `fields` to every entry. */
	child(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<LogLevel, number> = {
	debug: 10,
	info: 20,
	warn: 30,
	error: 40,
};
const SECRET_KEY = /token|secret|authorization|ticket|password/i;

function redact(fields: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(fields)) {
		if (SECRET_KEY.test(key) && typeof value === "string")
			out[key] = "[redacted]";
		else if (value instanceof Error) out[key] = value.message;
		else out[key] = value;
	}
	return out;
}

export function createLogger(
	level: LogLevel = "info",
	write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
	base: Record<string, unknown> = {},
): Logger {
	const min = ORDER[level];
	const emit = (
		lvl: LogLevel,
		msg: string,
		fields?: Record<string, unknown>,
	) => {
		if (ORDER[lvl] < min) return;
		write(
			JSON.stringify({
				time: new Date().toISOString(),
				level: lvl,
				msg,
				...redact({ ...base, ...fields }),
			}),
		);
	};
	return {
		debug: (msg, fields) => emit("debug", msg, fields),
		info: (msg, fields) => emit("info", msg, fields),
		warn: (msg, fields) => emit("warn", msg, fields),
		error: (msg, fields) => emit("error", msg, fields),
		child: (fields) => createLogger(level, write, { ...base, ...fields }),
	};
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger("error", () => {});
