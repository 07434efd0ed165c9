/**
 * Room `t3/connect/`: one T3 machine's connection: negotiate, HTTP reads, one connect attempt, the
 * shell subscription, reconnect and the requests that wait for it, token exchange and expiry. May
 * import `t3/rpc`, `t3/decode`, `t3/capabilities`, `t3/follow` types, `config/` and `util/`; knows
 * nothing of threads' use cases or MCP.
 */
/**
 * One T3 server as the rest of the connector sees it (machine-api.ts): the connect
 * sequence of PROTOCOL.md §0.3, a live `subscribeShell` mirror with resume by sequence
 * (§8.2), reconnect with capped exponential backoff, and commands re-sent with the same
 * commandId after a transport failure (§6.1). Reads go over HTTP, commands over the socket.
 * This file wires the parts (link.ts, connect.ts, subscribe.ts, reconnect.ts, requests.ts).
 */

import { watchTokenFile } from "../../config/token-file.ts";
import type { MachineConfig } from "../../config/types.ts";
import { probeDeliveryIntent } from "../capabilities/delivery-intent.ts";
import { decodePersistedAttachments } from "../decode/attachment.ts";
import { decodeLaunchResult } from "../decode/projection.ts";
import { decodeTurnItem } from "../decode/rows.ts";
import { decodeSearchMatches } from "../decode/search.ts";
import { decodeProjectShell, decodeShellSnapshot } from "../decode/shell.ts";
import { createShellMirror } from "../follow/shell-mirror.ts";
import { type Machine, T3Error } from "../machine-api.ts";
import type { LaunchThreadResult } from "../model.ts";
import { createConnect } from "./connect.ts";
import { createT3Http } from "./http.ts";
import {
	createMachineLink,
	emitChange,
	nextState,
	setState,
	terminalError,
} from "./link.ts";
import type { MachineDeps } from "./machine-deps.ts";
import { createReconnect, DEFAULT_BACKOFF } from "./reconnect.ts";
import { createRequests, READ_CONNECT_WAIT_MS } from "./requests.ts";
import { createSubscriptions } from "./subscribe.ts";

export type { MachineDeps } from "./machine-deps.ts";

export function createMachine(
	config: MachineConfig,
	deps: MachineDeps,
): Machine {
	const log = deps.log.child({ machine: config.name });
	const now = deps.now ?? Date.now;
	const random = deps.random ?? Math.random;
	const backoff = deps.backoff ?? DEFAULT_BACKOFF;
	const commandRetryMs = deps.commandRetryMs ?? 30_000;
	const requestTimeoutMs = deps.requestTimeoutMs ?? 15_000;
	const syncTimeoutMs = deps.syncTimeoutMs ?? 30_000;
	const pingTimeoutMs = deps.pingTimeoutMs ?? deps.pongTimeoutMs ?? 10_000;
	const base = config.url.replace(/\/+$/, "");
	const label = `T3 machine "${config.name}" (${base})`;
	// A token file is read again at every connect (negotiate): re-pairing needs no restart.
	const link = createMachineLink({ log, now, label, token: config.token });
	const http = createT3Http({
		url: base,
		token: () => link.token,
		...(deps.fetch ? { fetch: deps.fetch } : {}),
		...(deps.httpTimeoutMs !== undefined
			? { timeoutMs: deps.httpTimeoutMs }
			: {}),
	});
	let unwatchToken = () => {};
	const shell = createShellMirror((change) => emitChange(link, change));
	const reconnect = createReconnect(link, {
		backoff,
		random,
		connect: () => connect(),
	});
	const subscriptions = createSubscriptions(link, {
		shell,
		syncTimeoutMs,
		dropConnection: reconnect.dropConnection,
	});
	const connect = createConnect(link, {
		config,
		deps,
		http,
		base,
		shell,
		backoff,
		pingTimeoutMs,
		reconnect,
		subscriptions,
	});
	const { onlineClient, whileReachable, sendCommand, readRpc } = createRequests(
		link,
		{ pingTimeoutMs, commandRetryMs, requestTimeoutMs },
	);

	const machine: Machine = {
		name: config.name,
		url: base,
		// Not a copy: link.status is only ever replaced, never changed in place (link.ts).
		status: () => link.status,
		projects: shell.projects,
		threads: shell.threads,
		thread: shell.thread,
		sequence: shell.sequence,
		onChange(listener) {
			link.listeners.add(listener);
			return () => link.listeners.delete(listener);
		},
		async ready(timeoutMs = 30_000) {
			const deadline = now() + timeoutMs;
			for (;;) {
				if (link.status.state === "online") return;
				const terminal = terminalError(link);
				if (terminal) throw terminal;
				const remaining = deadline - now();
				if (remaining <= 0) {
					throw new T3Error(
						"TIMEOUT",
						`${link.status.reason ?? `${label} is not online`} (waited ${timeoutMs} ms)`,
					);
				}
				await nextState(link, remaining);
			}
		},
		async settled(timeoutMs) {
			const deadline = now() + timeoutMs;
			while (link.status.state === "connecting") {
				const remaining = deadline - now();
				if (remaining <= 0) return;
				await nextState(link, remaining);
			}
		},
		start() {
			if (link.running) return;
			link.running = true;
			link.attempt = 0;
			// A new token file (a re-pair) is tried at once, not at the next slow retry.
			if (config.tokenFile !== null)
				unwatchToken = watchTokenFile(config.tokenFile, () => {
					if (link.running && link.status.state === "unauthorized") {
						if (link.reconnectTimer) clearTimeout(link.reconnectTimer);
						link.reconnectTimer = undefined;
						void connect();
					}
				});
			void connect(true);
		},
		async stop() {
			link.running = false;
			unwatchToken();
			unwatchToken = () => {};
			link.generation += 1;
			if (link.reconnectTimer) clearTimeout(link.reconnectTimer);
			link.reconnectTimer = undefined;
			if (link.syncTimer) clearTimeout(link.syncTimer);
			link.syncTimer = undefined;
			const client = link.rpc;
			link.rpc = null;
			client?.close();
			setState(
				link,
				"offline",
				`the connection to ${label} was closed by t3code-mcp (it is shutting down, or the machine left the config)`,
			);
		},
		getThread: (threadId) => whileReachable(http.thread(threadId)),
		openStream(tag, payload, onItem, onEnd) {
			const client = link.rpc;
			if (link.status.state !== "online" || !client?.isOpen()) return null;
			return client.stream(tag, payload, onItem, (end) =>
				onEnd(end.ok ? { ok: true } : { ok: false, kind: end.kind }),
			);
		},
		async dispatch(command) {
			const value = await sendCommand("orchestration.dispatchCommand", command);
			const seq = (value as { sequence?: unknown } | null)?.sequence;
			if (typeof seq !== "number") {
				throw new T3Error(
					"BAD_RESPONSE",
					`${label}: dispatchCommand answered without a sequence`,
					{ raw: value },
				);
			}
			return { sequence: seq };
		},
		async launchThread(input): Promise<LaunchThreadResult> {
			return decodeLaunchResult(
				await sendCommand("orchestration.launchThread", input),
			);
		},
		async archivedThreads() {
			const raw = await readRpc("orchestration.getArchivedShellSnapshot", {});
			return decodeShellSnapshot(raw).threads;
		},
		async turnItem({ threadId, itemId }) {
			const value = await readRpc("orchestration.getTurnItem", {
				threadId,
				itemId,
			});
			const item = (value as { item?: unknown } | null)?.item;
			return item === null || item === undefined ? null : decodeTurnItem(item);
		},
		async turnDiff({ threadId, fromTurnCount, toTurnCount }) {
			const value =
				fromTurnCount === undefined
					? await readRpc("orchestration.getFullThreadDiff", {
							threadId,
							toTurnCount,
						})
					: await readRpc("orchestration.getTurnDiff", {
							threadId,
							fromTurnCount,
							toTurnCount,
						});
			const diff = (value as { diff?: unknown } | null)?.diff;
			if (typeof diff !== "string") {
				throw new T3Error(
					"BAD_RESPONSE",
					`${label}: the diff answer has no diff text`,
				);
			}
			return { diff };
		},
		deliveryIntent() {
			if (!link.deliveryIntent) {
				const asked = probeDeliveryIntent((command) =>
					sendCommand("orchestration.dispatchCommand", command),
				);
				link.deliveryIntent = asked;
				// An answer that decided nothing (a drop, a timeout) is asked again next time.
				asked.catch(() => {
					if (link.deliveryIntent === asked) link.deliveryIntent = null;
				});
			}
			return link.deliveryIntent;
		},
		async searchThreads({ query, limit, timeoutMs }) {
			const client = await onlineClient(now() + READ_CONNECT_WAIT_MS);
			const value = await client.request(
				"orchestration.searchThreads",
				{ query, limit },
				{ timeoutMs: timeoutMs ?? requestTimeoutMs },
			);
			return decodeSearchMatches(value);
		},
		async createProject(input) {
			const project = decodeProjectShell(
				await sendCommand("projects.mutate", {
					type: "project.create",
					...input,
				}),
			);
			shell.noteProject(project);
			return project;
		},
		async persistAttachments(input) {
			return decodePersistedAttachments(
				await sendCommand("assets.persistChatAttachments", input),
				input.attachments.length,
			);
		},
		providers: () => link.providers,
		async serverConfig() {
			const value = await sendCommand("server.getConfig", {});
			if (typeof value !== "object" || value === null) {
				throw new T3Error(
					"BAD_RESPONSE",
					`${label}: server.getConfig answered ${typeof value}`,
				);
			}
			return value as Record<string, unknown>;
		},
	};
	return machine;
}
