/**
 * Reconnecting one machine: capped exponential backoff with jitter, reset after a connection
 * that stayed up long enough, and the drop that takes a dead connection down and schedules the
 * next connect attempt.
 */

import { type MachineLink, setState } from "./link.ts";

export interface Backoff {
	initialMs: number;
	maxMs: number;
	resetAfterMs: number;
}

export const DEFAULT_BACKOFF: Backoff = {
	initialMs: 1_000,
	maxMs: 60_000,
	resetAfterMs: 60_000,
};

export interface Reconnect {
	/** The next connect attempt in `delayMs` (replacing one scheduled already). */
	scheduleConnect(delayMs: number): void;
	/** The connection is dead: close it, go offline and reconnect after the backoff. */
	dropConnection(reason: string, silent?: boolean): void;
}

export function createReconnect(
	link: MachineLink,
	options: {
		backoff: Backoff;
		random: () => number;
		connect: () => Promise<void>;
	},
): Reconnect {
	const { backoff, random, connect } = options;

	function backoffDelay(): number {
		const raw = Math.min(backoff.maxMs, backoff.initialMs * 2 ** link.attempt);
		link.attempt += 1;
		// Half fixed, half random: spreads reconnect storms without ever waiting ~0.
		return Math.round(raw / 2 + (random() * raw) / 2);
	}

	function scheduleConnect(delayMs: number): void {
		if (!link.running) return;
		if (link.reconnectTimer) clearTimeout(link.reconnectTimer);
		link.log.debug("reconnect scheduled", { delayMs });
		link.reconnectTimer = setTimeout(() => {
			link.reconnectTimer = undefined;
			void connect();
		}, delayMs);
	}

	function dropConnection(reason: string, silent = false): void {
		link.silentDrop = silent;
		if (link.syncTimer) clearTimeout(link.syncTimer);
		link.syncTimer = undefined;
		const client = link.rpc;
		link.rpc = null;
		client?.close();
		if (!link.running) return;
		if (
			link.onlineSince !== null &&
			link.now() - link.onlineSince >= backoff.resetAfterMs
		)
			link.attempt = 0;
		link.onlineSince = null;
		setState(link, "offline", `${link.label} is offline: ${reason}`);
		scheduleConnect(backoffDelay());
	}

	return { scheduleConnect, dropConnection };
}
