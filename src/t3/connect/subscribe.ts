/**
 * The machine's live subscriptions on one socket: `subscribeShell` resumed after the mirror's
 * sequence (PROTOCOL.md §8.2), which brings the machine online once `synchronized`, and
 * `subscribeServerConfig`, which tells listeners the model catalog is stale.
 */

import { createUnknownKindReporter } from "../decode/kinded.ts";
import { decodeShellStreamItem } from "../decode/shell-stream.ts";
import type { ShellMirror } from "../follow/shell-mirror.ts";
import type { ShellStreamItem } from "../model.ts";
import type { RpcClient } from "../rpc/rpc-client.ts";
import { emitChange, type MachineLink, noteEventAt, setState } from "./link.ts";

export interface Subscriptions {
	subscribe(client: RpcClient): void;
	watchConfig(client: RpcClient): void;
}

export function createSubscriptions(
	link: MachineLink,
	options: {
		shell: ShellMirror;
		/** How long the shell subscription may take to reach `synchronized` before we reconnect. */
		syncTimeoutMs: number;
		dropConnection: (reason: string) => void;
	},
): Subscriptions {
	const { shell, syncTimeoutMs, dropConnection } = options;
	const { log } = link;
	const reportUnknown = createUnknownKindReporter(log, "shell stream item");

	function subscribe(client: RpcClient): void {
		const payload: Record<string, unknown> = { requestCompletionMarker: true };
		if (shell.hasState()) payload.afterSequence = shell.sequence();
		link.syncTimer = setTimeout(() => {
			if (link.rpc === client)
				dropConnection(`shell not synchronized within ${syncTimeoutMs} ms`);
		}, syncTimeoutMs);
		client.stream(
			"orchestration.subscribeShell",
			payload,
			(raw) => {
				if (link.rpc !== client) return;
				apply(decodeShellStreamItem(raw, reportUnknown));
			},
			(end) => {
				if (
					link.rpc !== client ||
					(end.ok === false && end.kind === "disconnected")
				)
					return;
				const why = end.ok
					? "the server ended the shell subscription"
					: `shell subscription failed (${end.kind === "fail" ? end.message : end.kind === "die" ? end.defect : "interrupted"})`;
				dropConnection(why);
			},
		);
	}

	/**
	 * `subscribeServerConfig` (PROTOCOL.md §2.6, §4.4): T3 pushes a snapshot, then an item
	 * whenever providers or settings change; each later item tells listeners the model catalog
	 * is stale. Servers without it answer with an error, which is only logged.
	 */
	function watchConfig(client: RpcClient): void {
		let first = true;
		client.stream(
			"subscribeServerConfig",
			{},
			(raw) => {
				if (link.rpc !== client) return;
				const type = (raw as { type?: unknown } | null)?.type;
				if (first || type === "keybindingsUpdated") {
					first = false;
					return;
				}
				emitChange(link, { kind: "config" });
			},
			(end) => {
				if (link.rpc === client && !end.ok && end.kind !== "disconnected")
					log.debug("no server config stream", { end });
			},
		);
	}

	function apply(item: ShellStreamItem): void {
		if (item.kind === "unknown") return;
		noteEventAt(link, link.now());
		if (item.kind !== "synchronized") {
			shell.apply(item);
			return;
		}
		if (link.syncTimer) clearTimeout(link.syncTimer);
		link.syncTimer = undefined;
		setState(link, "online", null);
		emitChange(link, { kind: "synchronized", sequence: shell.sequence() });
	}

	return { subscribe, watchConfig };
}
