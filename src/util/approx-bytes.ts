/**
 * Roughly what a decoded JSON value holds in memory: a cell per object and array, a slot per
 * member, a string's header and characters. For budgets of kept data whose rows vary from a
 * few bytes to a tool's whole output, where a count of rows says nothing of their size. A
 * character counts one byte (a text outside Latin-1 takes two: up to twice the budget); shared
 * strings are counted where they appear; past `MAX_DEPTH` a branch counts as one cell.
 */
const CELL = 16;
const SLOT = 8;
const STRING = 24;
const MAX_DEPTH = 32;

export function approxBytes(value: unknown, depth = 0): number {
	if (typeof value === "string") return STRING + value.length;
	if (value === null || typeof value !== "object") return SLOT;
	if (depth >= MAX_DEPTH) return CELL;
	let bytes = CELL;
	if (Array.isArray(value))
		for (const item of value) bytes += SLOT + approxBytes(item, depth + 1);
	else
		for (const key in value)
			bytes +=
				SLOT + approxBytes((value as Record<string, unknown>)[key], depth + 1);
	return bytes;
}
