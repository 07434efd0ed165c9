/**
 * `t3_thread` `item_id`: one tool call's whole output through `orchestration.getTurnItem` (T3
 * 0.1.x withholds it from thread reads: `outputOmitted`). Capped like messages and masked like
 * every outside text. A server without the RPC (the pre-release engine) dies on it: said plainly.
 */
import { capText, toolTitle } from "../../t3/derive/derive.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { TurnItem } from "../../t3/model.ts";
import { maskSecrets } from "../../util/redact.ts";
import { ThreadError } from "../errors.ts";
import type { LocatedThread } from "../locate.ts";

export interface ItemView {
	item_id: string;
	kind: string;
	title: string;
	status: string;
	exit_code: number | null;
	output: string | null;
	truncated: boolean;
}

/** T3's output as text: a command's is a string, a dynamic tool's any JSON value. */
function outputText(item: TurnItem): string | null {
	const output = item.output;
	if (output === undefined || output === null) return null;
	return typeof output === "string" ? output : JSON.stringify(output, null, 2);
}

export async function readTurnItem(
	located: LocatedThread,
	itemId: string,
	cap: number,
): Promise<ItemView> {
	const { machine, config } = located.entry;
	const unsupported = () =>
		new ThreadError(
			`item_id: this T3 server (machine "${config.name}") does not support reading a tool call's whole output (orchestration.getTurnItem, T3 Code 0.1.x); t3_thread without item_id still shows each tool's title, status and exit code.`,
		);
	if (!machine.turnItem) throw unsupported();
	let item: TurnItem | null;
	try {
		item = await machine.turnItem({ threadId: located.threadId, itemId });
	} catch (error) {
		// An unknown RPC is a Die (RELEASED-0.1.md): the server predates it.
		if (error instanceof T3Error && error.code === "DEFECT")
			throw unsupported();
		throw error;
	}
	if (!item)
		throw new ThreadError(
			`item_id: thread "${located.threadId}" has no item "${itemId}". Take item_id from runs[].tools[] of t3_thread.`,
		);
	const text = outputText(item);
	// capText masks before it cuts; the length that decides the cut is the masked one.
	const masked = text === null ? null : maskSecrets(text);
	return {
		item_id: item.id,
		kind: item.type,
		title: capText(toolTitle(item), 300),
		status: item.status ?? "unknown",
		exit_code: typeof item.exitCode === "number" ? item.exitCode : null,
		output: text === null ? null : capText(text, cap),
		truncated: masked !== null && masked.length > cap,
	};
}
