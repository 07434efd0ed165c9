/**
 * The machine's live subscriptions on one socket: `subscribeShell` resumed after the mirror's
 * sequence (PROTOCOL.md §8.2), which brings the machine online once `synchronized`, and
 * `subscribeServerConfig`, which tells listeners the model catalog is stale.
 */

import {
	decodeProviderStatuses,
	noteProviderStatuses,
} from "../capabilities/provider-status.ts";
import { isRecord } from "../decode/json.ts";
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
	 * whenever providers or settings change. The providers' statuses and usage limits are kept
	 * (USAGE-AND-QUEUES.md §1.2: `providerStatuses` carries the full list); a later item that
	 * changes more than usage tells listeners the model catalog is stale. Never asks for
	 * `usageLimitsCommand` (that flag is not a feed). Servers without the stream answer with an
	 * error, which is only logged.
	 */
	function watchConfig(client: RpcClient): void {
		let first = true;
		let shape: string | null = null;
		client.stream(
			"subscribeServerConfig",
			{},
			(raw) => {
				if (link.rpc !== client) return;
				const item = isRecord(raw) ? raw : {};
				const type = item.type;
				const providers =
					type === "snapshot" && isRecord(item.config)
						? item.config.providers
						: type === "providerStatuses" && isRecord(item.payload)
							? item.payload.providers
							: undefined;
				let changed = true;
				if (Array.isArray(providers)) {
					link.providers = decodeProviderStatuses(providers, link.providers);
					noteProviderStatuses();
					const next = catalogShape(providers);
					changed = next !== shape;
					shape = next;
				}
				if (first || type === "keybindingsUpdated") {
					first = false;
					return;
				}
				if (changed) emitChange(link, { kind: "config" });
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

/** The providers as the model catalog reads them: everything but usage and probe times. */
function catalogShape(providers: unknown[]): string {
	return JSON.stringify(
		providers.map((p) => {
			if (!isRecord(p)) return p;
			const { usageLimits: _u, checkedAt: _c, ...rest } = p;
			return rest;
		}),
	);
}
