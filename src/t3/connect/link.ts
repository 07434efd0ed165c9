/**
 * One machine's connection state, shared by its connect, subscribe, reconnect and request parts
 * (machine.ts wires them): the status the rest of the connector sees, the live socket and its
 * timers, and the state transitions that wake whoever waits for one.
 */

import { notifyAll } from "../../util/listeners.ts";
import type { Logger } from "../../util/log.ts";
import { redact } from "../../util/redact.ts";
import type { ProviderStatus } from "../capabilities/provider-status.ts";
import {
	type MachineState,
	type MachineStatus,
	type ShellChange,
	T3Error,
} from "../machine-api.ts";
import type { RpcClient } from "../rpc/rpc-client.ts";

export interface MachineLink {
	readonly log: Logger;
	readonly now: () => number;
	/** `T3 machine "name" (url)`: what reasons and errors name. */
	readonly label: string;
	/** Replaced through `showStatus` (or `noteEventAt`), never in place or directly. */
	status: MachineStatus;
	readonly listeners: Set<(change: ShellChange) => void>;
	readonly stateWaiters: Set<() => void>;
	/** The token in use; a token file is read again at every connect (negotiate). */
	token: string | undefined;
	running: boolean;
	generation: number;
	rpc: RpcClient | null;
	attempt: number;
	onlineSince: number | null;
	reconnectTimer: ReturnType<typeof setTimeout> | undefined;
	syncTimer: ReturnType<typeof setTimeout> | undefined;
	/** The last connection was declared dead for silence: the server is stopped or cut off. */
	silentDrop: boolean;
	/**
	 * Whether the server takes deliveryIntent, for this connection (an upgrade may change it):
	 * its descriptor's `serverResolvedCommandContext`, else its answer to the probe.
	 */
	deliveryIntent: Promise<boolean> | null;
	/**
	 * Each provider instance's status and usage as `subscribeServerConfig` last said (kept across
	 * reconnects until the next snapshot); null before T3 said anything.
	 */
	providers: ProviderStatus[] | null;
}

export function createMachineLink(input: {
	log: Logger;
	now: () => number;
	label: string;
	token: string | undefined;
}): MachineLink {
	return {
		...input,
		// A configured machine is about to connect (the fleet staggers starts), not offline.
		status: {
			state: "connecting",
			reason: null,
			serverVersion: null,
			lastEventAt: null,
			tokenExpiresAt: null,
		},
		listeners: new Set(),
		stateWaiters: new Set(),
		running: false,
		generation: 0,
		rpc: null,
		attempt: 0,
		onlineSince: null,
		reconnectTimer: undefined,
		syncTimer: undefined,
		silentDrop: false,
		deliveryIntent: null,
		providers: null,
	};
}

/**
 * Changes to what a machine's status shows (state, reason, server version, token expiry), on
 * every machine: what a kept `t3_machines` answer compares, one number instead of four fields of
 * each of 500 machines per call. The time of the last shell item is not counted: it changes
 * with every event and `t3_machines` does not show it.
 */
let shownStatusChanges = 0;
export const shownStatusVersion = (): number => shownStatusChanges;

/** Replaces fields of the status that `t3_machines` shows. */
export function showStatus(
	link: MachineLink,
	fields: Partial<Omit<MachineStatus, "lastEventAt">>,
): void {
	link.status = { ...link.status, ...fields };
	shownStatusChanges += 1;
}

/** Notes a shell item's arrival (nothing `t3_machines` shows). */
export function noteEventAt(link: MachineLink, at: number): void {
	link.status = { ...link.status, lastEventAt: at };
}

export function emitChange(link: MachineLink, change: ShellChange): void {
	notifyAll(link.listeners, change, link.log, "shell change");
}

export function setState(
	link: MachineLink,
	state: MachineState,
	raw: string | null,
): void {
	const { status } = link;
	// Reasons quote servers and proxies (close reasons, error bodies): redacted once here,
	// before t3_machines, /healthz or the log show them.
	const reason = raw === null ? null : redact(raw);
	if (status.state === state && status.reason === reason) return;
	const downSince =
		state === "online"
			? null
			: (status.downSince ??
				(status.state === "online" || state !== "connecting"
					? link.now()
					: null));
	showStatus(link, { state, reason, downSince });
	if (state === "online") {
		link.onlineSince = link.now();
		link.silentDrop = false;
	}
	link.log.info("machine state", { state, reason });
	emitChange(link, { kind: "state", status: { ...link.status } });
	for (const wake of [...link.stateWaiters]) wake();
}

/** Waits for the next state transition (or the timeout); resolves false on timeout. */
export function nextState(
	link: MachineLink,
	timeoutMs: number,
): Promise<boolean> {
	return new Promise((resolve) => {
		const wake = () => {
			clearTimeout(timer);
			link.stateWaiters.delete(wake);
			resolve(true);
		};
		const timer = setTimeout(
			() => {
				link.stateWaiters.delete(wake);
				resolve(false);
			},
			Math.max(0, timeoutMs),
		);
		link.stateWaiters.add(wake);
	});
}

export function terminalError(link: MachineLink): T3Error | null {
	const { status, label } = link;
	if (status.state === "unauthorized")
		return new T3Error(
			"UNAUTHORIZED",
			status.reason ?? `${label}: unauthorized`,
		);
	if (status.state === "incompatible")
		return new T3Error(
			"INCOMPATIBLE",
			status.reason ?? `${label}: incompatible`,
		);
	return null;
}

export function notOnline(link: MachineLink): T3Error {
	return new T3Error(
		"UNREACHABLE",
		link.status.reason ?? `${link.label} is not online`,
	);
}
