/**
 * One T3 server as the rest of the connector sees it (machine-api.ts): the connect
 * sequence of PROTOCOL.md §0.3, a live `subscribeShell` mirror with resume by sequence
 * (§8.2), reconnect with capped exponential backoff, and commands re-sent with the same
 * commandId after a transport failure (§6.1). Reads go over HTTP, commands over the socket.
 */

import { machineToken, watchTokenFile } from "../../config/token-file.ts";
import type { MachineConfig } from "../../config/types.ts";
import { notifyAll } from "../../util/listeners.ts";
import type { Logger } from "../../util/log.ts";
import { redact } from "../../util/redact.ts";
import { probeDeliveryIntent } from "../capabilities/delivery-intent.ts";
import { decodePersistedAttachments } from "../decode/attachment.ts";
import { createUnknownKindReporter } from "../decode/kinded.ts";
import { decodeLaunchResult } from "../decode/projection.ts";
import { decodeTurnItem } from "../decode/rows.ts";
import { decodeSearchMatches } from "../decode/search.ts";
import { decodeProjectShell, decodeShellSnapshot } from "../decode/shell.ts";
import { decodeShellStreamItem } from "../decode/shell-stream.ts";
import { createShellMirror } from "../follow/shell-mirror.ts";
import {
	type Machine,
	type MachineState,
	type MachineStatus,
	type ShellChange,
	T3Error,
} from "../machine-api.ts";
import type { LaunchThreadResult, ShellStreamItem } from "../model.ts";
import type { RpcClient, WebSocketCtor } from "../rpc/rpc-client.ts";
import {
	connectFailure,
	openMachineSocket,
	readShellOverHttp,
} from "./connect-steps.ts";
import { createT3Http, type FetchLike } from "./http.ts";
import { negotiate } from "./negotiate.ts";

export interface MachineDeps {
	log: Logger;
	fetch?: FetchLike;
	WebSocket?: WebSocketCtor;
	now?: () => number;
	random?: () => number;
	backoff?: { initialMs: number; maxMs: number; resetAfterMs: number };
	/**
	 * Silence on the socket after which the machine is offline (`T3CODE_MCP_PING_TIMEOUT_S`,
	 * default 10 s); pings go every third of it. Also the longest a tool call waits for an
	 * offline machine, or for a read from a machine that is not online.
	 */
	pingTimeoutMs?: number;
	/** Heartbeat of the shell socket (rpc-client.ts); default from `pingTimeoutMs`. */
	pingIntervalMs?: number;
	pongTimeoutMs?: number;
	httpTimeoutMs?: number;
	/**
	 * Where the expiry T3 reports for the machine's token is kept beyond this process (the
	 * state file), so a token dead after a restart still reads "expired"; memory only without.
	 */
	tokenExpiry?: {
		get(token: string): string | null;
		set(token: string, expiresAt: string | null): void;
	};
	/** How long dispatch/launchThread keep re-sending the same command after transport failures. */
	commandRetryMs?: number;
	/** Timeout of one RPC attempt. */
	requestTimeoutMs?: number;
	/** How long the shell subscription may take to reach `synchronized` before we reconnect. */
	syncTimeoutMs?: number;
	/**
	 * Treat a descriptor without `orchestrationProtocolVersion` as protocol 2. Only for the
	 * pre-release servers of OBSERVED.md §6.1, which speak V2 without advertising it.
	 */
	assumeProtocol2?: boolean;
}

/** How long a read waits for a machine that is (re)connecting before giving up. */
const READ_CONNECT_WAIT_MS = 5_000;
const DEFAULT_BACKOFF = {
	initialMs: 1_000,
	maxMs: 60_000,
	resetAfterMs: 60_000,
};

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
	let token = config.token;
	/** The expiry T3 reported for the token in use (one entry: the current token). */
	const expiries = new Map<string, string>();
	const http = createT3Http({
		url: base,
		token: () => token,
		...(deps.fetch ? { fetch: deps.fetch } : {}),
		...(deps.httpTimeoutMs !== undefined
			? { timeoutMs: deps.httpTimeoutMs }
			: {}),
	});
	const reportUnknown = createUnknownKindReporter(log, "shell stream item");

	// A configured machine is about to connect (the fleet staggers starts), not offline.
	let status: MachineStatus = {
		state: "connecting",
		reason: null,
		serverVersion: null,
		lastEventAt: null,
		tokenExpiresAt: null,
	};
	const listeners = new Set<(change: ShellChange) => void>();
	const stateWaiters = new Set<() => void>();

	let running = false;
	let generation = 0;
	let rpc: RpcClient | null = null;
	let attempt = 0;
	let onlineSince: number | null = null;
	let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
	let syncTimer: ReturnType<typeof setTimeout> | undefined;
	/** The last connection was declared dead for silence: the server is stopped or cut off. */
	let silentDrop = false;
	/** The server's answer to the deliveryIntent probe, for this connection (an upgrade may change it). */
	let deliveryIntent: Promise<boolean> | null = null;
	let unwatchToken = () => {};

	function emit(change: ShellChange): void {
		notifyAll(listeners, change, log, "shell change");
	}
	const shell = createShellMirror(emit);

	function setState(state: MachineState, raw: string | null): void {
		// Reasons quote servers and proxies (close reasons, error bodies): redacted once here,
		// before t3_machines, /healthz or the log show them.
		const reason = raw === null ? null : redact(raw);
		if (status.state === state && status.reason === reason) return;
		const downSince =
			state === "online"
				? null
				: (status.downSince ??
					(status.state === "online" || state !== "connecting" ? now() : null));
		status = { ...status, state, reason, downSince };
		if (state === "online") {
			onlineSince = now();
			silentDrop = false;
		}
		log.info("machine state", { state, reason });
		emit({ kind: "state", status: { ...status } });
		for (const wake of [...stateWaiters]) wake();
	}

	/** Waits for the next state transition (or the timeout); resolves false on timeout. */
	function nextState(timeoutMs: number): Promise<boolean> {
		return new Promise((resolve) => {
			const wake = () => {
				clearTimeout(timer);
				stateWaiters.delete(wake);
				resolve(true);
			};
			const timer = setTimeout(
				() => {
					stateWaiters.delete(wake);
					resolve(false);
				},
				Math.max(0, timeoutMs),
			);
			stateWaiters.add(wake);
		});
	}

	function terminalError(): T3Error | null {
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

	function backoffDelay(): number {
		const raw = Math.min(backoff.maxMs, backoff.initialMs * 2 ** attempt);
		attempt += 1;
		// Half fixed, half random: spreads reconnect storms without ever waiting ~0.
		return Math.round(raw / 2 + (random() * raw) / 2);
	}

	function scheduleConnect(delayMs: number): void {
		if (!running) return;
		if (reconnectTimer) clearTimeout(reconnectTimer);
		log.debug("reconnect scheduled", { delayMs });
		reconnectTimer = setTimeout(() => {
			reconnectTimer = undefined;
			void connect();
		}, delayMs);
	}

	function dropConnection(reason: string, silent = false): void {
		silentDrop = silent;
		if (syncTimer) clearTimeout(syncTimer);
		syncTimer = undefined;
		const client = rpc;
		rpc = null;
		client?.close();
		if (!running) return;
		if (onlineSince !== null && now() - onlineSince >= backoff.resetAfterMs)
			attempt = 0;
		onlineSince = null;
		setState("offline", `${label} is offline: ${reason}`);
		scheduleConnect(backoffDelay());
	}

	async function connect(first = false): Promise<void> {
		if (!running) return;
		const gen = ++generation;
		const stale = () => gen !== generation || !running;
		// Only the first attempt shows "connecting": a retry keeps the state it retries from
		// (offline / unauthorized / incompatible), so a slow retry loop does not flap the state.
		if (first) setState("connecting", null);
		try {
			const negotiated = await negotiate({
				http,
				config,
				label,
				base,
				...(deps.assumeProtocol2 ? { assumeProtocol2: true } : {}),
				stale,
				onDescriptor: (descriptor) => {
					status = {
						...status,
						serverVersion:
							descriptor.serverVersion === undefined
								? null
								: redact(descriptor.serverVersion),
					};
				},
				readToken: () => machineToken(config),
				useToken: (next) => {
					if (next !== token) expiries.clear();
					token = next;
				},
				knownExpiry: (t) => expiries.get(t) ?? deps.tokenExpiry?.get(t) ?? null,
				now,
			});
			if (negotiated.kind === "stale") return;
			deliveryIntent = null;
			if (negotiated.kind === "ok" && token !== undefined) {
				expiries.clear();
				if (negotiated.tokenExpiresAt !== null)
					expiries.set(token, negotiated.tokenExpiresAt);
				deps.tokenExpiry?.set(token, negotiated.tokenExpiresAt);
			}
			status = {
				...status,
				tokenExpiresAt:
					negotiated.kind === "ok"
						? negotiated.tokenExpiresAt
						: (negotiated.tokenExpiresAt ?? null),
			};
			if (negotiated.kind === "refused") {
				setState(negotiated.state, negotiated.reason);
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
					status = { ...status, lastEventAt: now() };
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
			rpc = client;
			client.onClose((reason, silent) => {
				if (rpc === client) dropConnection(reason, silent);
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
			setState(failure.state, failure.reason);
			scheduleConnect(backoff.maxMs);
		}
	}

	function subscribe(client: RpcClient): void {
		const payload: Record<string, unknown> = { requestCompletionMarker: true };
		if (shell.hasState()) payload.afterSequence = shell.sequence();
		syncTimer = setTimeout(() => {
			if (rpc === client)
				dropConnection(`shell not synchronized within ${syncTimeoutMs} ms`);
		}, syncTimeoutMs);
		client.stream(
			"orchestration.subscribeShell",
			payload,
			(raw) => {
				if (rpc !== client) return;
				apply(decodeShellStreamItem(raw, reportUnknown));
			},
			(end) => {
				if (rpc !== client || (end.ok === false && end.kind === "disconnected"))
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
				if (rpc !== client) return;
				const type = (raw as { type?: unknown } | null)?.type;
				if (first || type === "keybindingsUpdated") {
					first = false;
					return;
				}
				emit({ kind: "config" });
			},
			(end) => {
				if (rpc === client && !end.ok && end.kind !== "disconnected")
					log.debug("no server config stream", { end });
			},
		);
	}

	function apply(item: ShellStreamItem): void {
		if (item.kind === "unknown") return;
		status = { ...status, lastEventAt: now() };
		if (item.kind !== "synchronized") {
			shell.apply(item);
			return;
		}
		if (syncTimer) clearTimeout(syncTimer);
		syncTimer = undefined;
		setState("online", null);
		emit({ kind: "synchronized", sequence: shell.sequence() });
	}

	function notOnline(): T3Error {
		return new T3Error(
			"UNREACHABLE",
			status.reason ?? `${label} is not online`,
		);
	}

	/**
	 * The socket to send a command on, once the machine is online. A machine that is down gets
	 * at most one ping timeout to come back (a blip or a restart does), and none after it went
	 * silent (a stopped server would only hang the caller): the caller hears its state instead.
	 */
	async function onlineClient(deadline: number): Promise<RpcClient> {
		const waitUntil = Math.min(deadline, now() + pingTimeoutMs);
		for (;;) {
			const terminal = terminalError();
			if (terminal) throw terminal;
			if (status.state === "online" && rpc?.isOpen()) return rpc;
			const remaining = waitUntil - now();
			if (remaining <= 0 || silentDrop) throw notOnline();
			await nextState(remaining);
		}
	}

	/**
	 * An HTTP read that gives up with the machine's state when the machine goes down meanwhile;
	 * when it is not online to begin with, after one ping timeout, or at once when it went
	 * silent: a stopped server accepts the connection and then never answers.
	 */
	function whileReachable<T>(work: Promise<T>): Promise<T> {
		return new Promise<T>((resolve, reject) => {
			let timer: ReturnType<typeof setTimeout> | undefined;
			const done = () => {
				if (timer) clearTimeout(timer);
				stateWaiters.delete(wake);
			};
			const wake = () => {
				if (status.state === "online") return;
				done();
				reject(notOnline());
			};
			if (status.state === "online") stateWaiters.add(wake);
			else if (silentDrop) {
				work.catch(() => {}); // abandoned: its own timeout ends it
				reject(notOnline());
				return;
			} else timer = setTimeout(wake, pingTimeoutMs);
			work.then(
				(value) => {
					done();
					resolve(value);
				},
				(error) => {
					done();
					reject(error);
				},
			);
		});
	}

	/** Send one command, re-sending the identical payload after transport failures (§6.1). */
	async function sendCommand(tag: string, payload: unknown): Promise<unknown> {
		const deadline = now() + commandRetryMs;
		let lastError: T3Error | undefined;
		for (;;) {
			let client: RpcClient;
			try {
				client = await onlineClient(deadline);
			} catch (err) {
				// After a silent drop the machine's state says more than "connection lost".
				throw lastError &&
					!silentDrop &&
					err instanceof T3Error &&
					err.code === "UNREACHABLE"
					? lastError
					: err;
			}
			const remaining = Math.max(
				1,
				Math.min(requestTimeoutMs, deadline - now()),
			);
			try {
				return await client.request(tag, payload, { timeoutMs: remaining });
			} catch (err) {
				if (
					err instanceof T3Error &&
					(err.code === "DISCONNECTED" || err.code === "TIMEOUT")
				) {
					lastError = err;
					log.warn("command uncertain, will re-send the same command", {
						tag,
						code: err.code,
					});
					if (now() >= deadline) throw err;
					// After a drop, onlineClient() waits for the reconnect before the re-send.
					continue;
				}
				// A refusal of a re-send does not prove the first send was refused too (the wire
				// does not tell "rejected" from "already done"): callers must treat it as uncertain.
				if (lastError && err instanceof T3Error) {
					throw new T3Error(err.code, err.message, {
						...err.detail,
						retried: true,
					});
				}
				throw err;
			}
		}
	}

	/** One read RPC on the live socket: reads are not re-sent, and wait at most briefly for a connect. */
	async function readRpc(tag: string, payload: unknown): Promise<unknown> {
		const client = await onlineClient(now() + READ_CONNECT_WAIT_MS);
		return client.request(tag, payload, { timeoutMs: requestTimeoutMs });
	}

	const machine: Machine = {
		name: config.name,
		url: base,
		status: () => ({ ...status }),
		projects: shell.projects,
		threads: shell.threads,
		thread: shell.thread,
		sequence: shell.sequence,
		onChange(listener) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		async ready(timeoutMs = 30_000) {
			const deadline = now() + timeoutMs;
			for (;;) {
				if (status.state === "online") return;
				const terminal = terminalError();
				if (terminal) throw terminal;
				const remaining = deadline - now();
				if (remaining <= 0) {
					throw new T3Error(
						"TIMEOUT",
						`${status.reason ?? `${label} is not online`} (waited ${timeoutMs} ms)`,
					);
				}
				await nextState(remaining);
			}
		},
		start() {
			if (running) return;
			running = true;
			attempt = 0;
			// A new token file (a re-pair) is tried at once, not at the next slow retry.
			if (config.tokenFile !== null)
				unwatchToken = watchTokenFile(config.tokenFile, () => {
					if (running && status.state === "unauthorized") {
						if (reconnectTimer) clearTimeout(reconnectTimer);
						reconnectTimer = undefined;
						void connect();
					}
				});
			void connect(true);
		},
		async stop() {
			running = false;
			unwatchToken();
			unwatchToken = () => {};
			generation += 1;
			if (reconnectTimer) clearTimeout(reconnectTimer);
			reconnectTimer = undefined;
			if (syncTimer) clearTimeout(syncTimer);
			syncTimer = undefined;
			const client = rpc;
			rpc = null;
			client?.close();
			setState("offline", `${label} is stopped`);
		},
		getThread: (threadId) => whileReachable(http.thread(threadId)),
		openStream(tag, payload, onItem, onEnd) {
			const client = rpc;
			if (status.state !== "online" || !client?.isOpen()) return null;
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
			if (!deliveryIntent) {
				const asked = probeDeliveryIntent((command) =>
					sendCommand("orchestration.dispatchCommand", command),
				);
				deliveryIntent = asked;
				// An answer that decided nothing (a drop, a timeout) is asked again next time.
				asked.catch(() => {
					if (deliveryIntent === asked) deliveryIntent = null;
				});
			}
			return deliveryIntent;
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
