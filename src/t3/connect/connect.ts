/**
 * One connect attempt of a machine (PROTOCOL.md §0.3): negotiate, read the shell over HTTP when
 * the mirror has none, open the socket and start its subscriptions; a refusal or failure sets
 * the machine's state and schedules the next attempt.
 */

import { machineToken } from "../../config/token-file.ts";
import type { MachineConfig } from "../../config/types.ts";
import { redact } from "../../util/redact.ts";
import { declaredDeliveryIntent } from "../capabilities/delivery-intent.ts";
import type { ShellMirror } from "../follow/shell-mirror.ts";
import {
	connectFailure,
	openMachineSocket,
	readShellOverHttp,
} from "./connect-steps.ts";
import type { T3Http } from "./http.ts";
import { type MachineLink, noteEventAt, setState, showStatus } from "./link.ts";
import type { MachineDeps } from "./machine-deps.ts";
import { negotiate } from "./negotiate.ts";
import type { Backoff, Reconnect } from "./reconnect.ts";
import type { Subscriptions } from "./subscribe.ts";

export function createConnect(
	link: MachineLink,
	options: {
		config: MachineConfig;
		deps: MachineDeps;
		http: T3Http;
		base: string;
		shell: ShellMirror;
		backoff: Backoff;
		pingTimeoutMs: number;
		reconnect: Reconnect;
		subscriptions: Subscriptions;
	},
): (first?: boolean) => Promise<void> {
	const { config, deps, http, base, shell, backoff, pingTimeoutMs } = options;
	const { log, label, now } = link;
	const { scheduleConnect, dropConnection } = options.reconnect;
	const { subscribe, watchConfig } = options.subscriptions;
	/** The expiry T3 reported for the token in use (one entry: the current token). */
	const expiries = new Map<string, string>();

	return async function connect(first = false): Promise<void> {
		if (!link.running) return;
		const gen = ++link.generation;
		const stale = () => gen !== link.generation || !link.running;
		// Only the first attempt shows "connecting": a retry keeps the state it retries from
		// (offline / unauthorized / incompatible), so a slow retry loop does not flap the state.
		if (first) setState(link, "connecting", null);
		try {
			const negotiated = await negotiate({
				http,
				config,
				label,
				base,
				...(deps.assumeProtocol2 ? { assumeProtocol2: true } : {}),
				stale,
				onDescriptor: (descriptor) => {
					showStatus(link, {
						serverVersion:
							descriptor.serverVersion === undefined
								? null
								: redact(descriptor.serverVersion),
					});
				},
				readToken: () => machineToken(config),
				useToken: (next) => {
					if (next !== link.token) expiries.clear();
					link.token = next;
				},
				knownExpiry: (t) => expiries.get(t) ?? deps.tokenExpiry?.get(t) ?? null,
				now,
			});
			if (negotiated.kind === "stale") return;
			// The descriptor's flag answers for this connection; without one the probe asks.
			const declared =
				negotiated.kind === "ok"
					? declaredDeliveryIntent(negotiated.descriptor)
					: undefined;
			link.deliveryIntent =
				declared === undefined ? null : Promise.resolve(declared);
			const token = link.token;
			if (negotiated.kind === "ok" && token !== undefined) {
				expiries.clear();
				if (negotiated.tokenExpiresAt !== null)
					expiries.set(token, negotiated.tokenExpiresAt);
				deps.tokenExpiry?.set(token, negotiated.tokenExpiresAt);
			}
			showStatus(link, {
				tokenExpiresAt:
					negotiated.kind === "ok"
						? negotiated.tokenExpiresAt
						: (negotiated.tokenExpiresAt ?? null),
			});
			if (negotiated.kind === "refused") {
				setState(link, negotiated.state, negotiated.reason);
				// An upgrade or a new token may come while we run: look again, slowly.
				scheduleConnect(backoff.maxMs);
				return;
			}
			if (!shell.hasState()) {
				// No shell yet: read it over HTTP and subscribe after its sequence (PROTOCOL.md §0.3).
				// Over the socket the snapshot would pin memory: Bun's WebSocket keeps its receive
				// buffer as large as the largest message it took in (~1 KB per thread), per
				// machine, for the socket's life. An HTTP body is freed once decoded.
				const snapshot = await readShellOverHttp(http, log);
				if (stale()) return;
				if (snapshot) {
					noteEventAt(link, now());
					shell.applySnapshot(snapshot);
				}
			}
			const client = await openMachineSocket({
				http,
				base,
				log,
				...(deps.WebSocket ? { WebSocket: deps.WebSocket } : {}),
				pingIntervalMs: deps.pingIntervalMs ?? Math.round(pingTimeoutMs / 3),
				pongTimeoutMs: deps.pongTimeoutMs ?? pingTimeoutMs,
				now,
				stale,
			});
			if (!client) return;
			link.rpc = client;
			client.onClose((reason, silent) => {
				if (link.rpc === client) dropConnection(reason, silent);
			});
			subscribe(client);
			watchConfig(client);
		} catch (err) {
			if (stale()) return;
			const failure = connectFailure(err, label);
			if (failure.kind === "drop") {
				dropConnection(failure.reason);
				return;
			}
			setState(link, failure.state, failure.reason);
			scheduleConnect(backoff.maxMs);
		}
	};
}
