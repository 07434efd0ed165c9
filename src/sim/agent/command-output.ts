/**
 * Withheld tool output, as a 0.1.x server sends it: a finished `command_execution` item carries
 * `outputOmitted: true` (and `outputIndicatesFailure`) on the wire, and the whole output is read
 * with `orchestration.getTurnItem` (turn-item-rpc.ts). Kept beside the rows, never in them, so
 * projections and streams stay as small as the real ones.
 */
import { type SimCompat, simHas } from "../compat.ts";
import type { Row } from "../engine/rows.ts";
import type { ThreadState } from "../engine/store.ts";

const outputs = new WeakMap<ThreadState, Map<string, string>>();

/** What the sim's agent prints for a command (deterministic, so tests can check it). */
export function defaultOutput(input: string, exitCode: number): string {
	return exitCode === 0
		? `$ ${input}\nNOTES.md\nsrc\n`
		: `$ ${input}\ncommand failed with exit code ${exitCode}\n`;
}

/** The wire fields of a finished command whose output T3 withholds. */
export function withholdOutput(
	compat: SimCompat,
	thread: ThreadState,
	itemId: string,
	output: string,
	exitCode: number,
): Record<string, unknown> {
	// The pre-release strips the output without a word and has no getTurnItem to read it.
	if (!simHas(compat, "getTurnItem")) return {};
	let byItem = outputs.get(thread);
	if (!byItem) {
		byItem = new Map();
		outputs.set(thread, byItem);
	}
	byItem.set(itemId, output);
	return { outputOmitted: true, outputIndicatesFailure: exitCode !== 0 };
}

/** The item with its whole output, as `getTurnItem` answers; the row itself when none was withheld. */
export function withOutput(thread: ThreadState, item: Row): Row {
	const output = outputs.get(thread)?.get(item.id as string);
	if (output === undefined) return item;
	const { outputOmitted: _, ...rest } = item;
	return { ...rest, output };
}
