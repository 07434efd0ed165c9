/**
 * Structured JSON logs, one line per entry on stderr. Fields whose key looks like a secret
 * (token, secret, authorization, ticket) are replaced before writing, and every string is
 * redacted (redact.ts `redactOwn`), so a careless call site cannot leak a credential; a name
 * that merely begins or ends like a secret (client "agent", token "agent-token-…") stays readable.
 */
import type { LogLevel } from "../config/types.ts";
import { maskJsonText, maskLinkPaths, redact, redactOwn } from "./redact.ts";

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

function redactFields(
	fields: Record<string, unknown>,
	depth = 0,
): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(fields)) {
		if (SECRET_KEY.test(key) && typeof value === "string")
			out[key] = "[redacted]";
		else out[key] = redactValue(value, depth);
	}
	return out;
}

/** The safety net: strings anywhere in a field (nested a few levels) are redacted. */
function redactValue(value: unknown, depth: number): unknown {
	if (typeof value === "string") return redactOwn(value);
	// An error's message may quote anything unmasked: a piece at its edge is masked too.
	if (value instanceof Error) return redact(value.message);
	if (depth >= 4 || value === null || typeof value !== "object") return value;
	if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
	const proto = Object.getPrototypeOf(value);
	if (proto !== Object.prototype && proto !== null) return value;
	return redactFields(value as Record<string, unknown>, depth + 1);
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
		// The line itself once more: a class instance's fields are serialised unredacted.
		// Approval link tokens too (`/a/<token>` in a path or URL): a link is a one-tap approval.
		write(
			maskLinkPaths(
				maskJsonText(
					JSON.stringify({
						time: new Date().toISOString(),
						level: lvl,
						msg: redactOwn(msg),
						...redactFields({ ...base, ...fields }),
					}),
				),
			),
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
