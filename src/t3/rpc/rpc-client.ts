/**
 * Room `t3/rpc/`: Effect-RPC over one WebSocket: the JSON framing (rpc-codec.ts, pure) and the
 * connection (calls, streams, acks, interrupts). Imports only the error type of
 * `t3/machine-api.ts` and `util/`; knows nothing of machines, threads or MCP.
 */
/**
 * One Effect-RPC connection to a T3 server's `/ws` (PROTOCOL.md §4) over the native
 * WebSocket: calls, streams with one Ack per Chunk, Interrupt to cancel, and an app-level
 * Ping heartbeat, because Bun's client never notices a half-open peer by itself
 * (notes/bun.md §5). It does not reconnect: the machine owns that.
 */
import type { Logger } from "../../util/log.ts";
import { redact } from "../../util/redact.ts";
import { T3Error } from "../machine-api.ts";
import {
	decodeExit,
	decodeFrame,
	defectText,
	type ExitResult,
	encodeAck,
	encodeInterrupt,
	encodePing,
	encodeRequest,
} from "./rpc-codec.ts";

export type WebSocketCtor = new (url: string) => WebSocket;

export interface RpcClientOptions {
	/** ws(s) URL including the query (`?wsTicket=…&orchestrationProtocol=2`). */
	url: string;
	WebSocket?: WebSocketCtor;
	log: Logger;
	pingIntervalMs?: number;
	/** No inbound frame (Pong or anything else) for this long → the socket is dead. */
	pongTimeoutMs?: number;
	/** How long the opening handshake may take. */
	connectTimeoutMs?: number;
	now?: () => number;
}

/** How a stream ended: its Exit, or the socket going away under it. */
export type StreamEnd =
	| ExitResult
	| { ok: false; kind: "disconnected"; reason: string };

export interface RpcStream {
	cancel(): void;
}

export interface RpcClient {
	/** A call; rejects with T3Error REJECTED (detail.tag = the error `_tag`), DEFECT, DISCONNECTED or TIMEOUT. */
	request(
		tag: string,
		payload: unknown,
		options?: { timeoutMs?: number },
	): Promise<unknown>;
	/** A stream: `onItem` gets every value of every Chunk, then the Chunk is acked. */
	stream(
		tag: string,
		payload: unknown,
		onItem: (value: unknown) => void,
		onEnd?: (end: StreamEnd) => void,
	): RpcStream;
	/**
	 * Called once when the connection is gone (closed by either side or declared dead);
	 * `silent` when it was declared dead because the server sent nothing for `pongTimeoutMs`.
	 */
	onClose(listener: (reason: string, silent: boolean) => void): () => void;
	close(): void;
	isOpen(): boolean;
}

const OPEN = 1;

interface Pending {
	resolve(value: unknown): void;
	reject(err: T3Error): void;
	timer: ReturnType<typeof setTimeout> | undefined;
	tag: string;
}

interface StreamEntry {
	onItem(value: unknown): void;
	onEnd?: (end: StreamEnd) => void;
	tag: string;
}

function errorFromEvent(ev: Event): string {
	const e = ev as Event & { message?: unknown; error?: unknown };
	if (typeof e.message === "string" && e.message) return e.message;
	if (e.error instanceof Error) return e.error.message;
	return "websocket error";
}

/** Strip the query (it carries the ticket) before a URL goes into a message. */
function safeUrl(url: string): string {
	const q = url.indexOf("?");
	return q === -1 ? url : url.slice(0, q);
}

function openError(url: string, message: string): T3Error {
	const where = safeUrl(url);
	if (/\b401\b/.test(message))
		return new T3Error(
			"UNAUTHORIZED",
			`${where} rejected the websocket ticket (401)`,
		);
	if (/\b426\b/.test(message)) {
		return new T3Error(
			"INCOMPATIBLE",
			`${where} requires another orchestration protocol (426)`,
		);
	}
	return new T3Error(
		"UNREACHABLE",
		`cannot open websocket ${where}: ${message}`,
	);
}

function exitError(
	tag: string,
	result: Exclude<ExitResult, { ok: true }>,
): T3Error {
	switch (result.kind) {
		case "fail":
			return new T3Error("REJECTED", result.message, {
				tag: result.tag,
				raw: result.error,
			});
		case "die":
			return new T3Error(
				"DEFECT",
				`${tag} failed on the server: ${result.defect}`,
				{ raw: result.defect },
			);
		case "interrupt":
			return new T3Error(
				"DISCONNECTED",
				`${tag} was interrupted by the server`,
			);
	}
}

/** Open the socket; resolves once it is open, rejects with a T3Error when it cannot be. */
export function connectRpc(options: RpcClientOptions): Promise<RpcClient> {
	const Ctor: WebSocketCtor = options.WebSocket ?? WebSocket;
	const log = options.log;
	const now = options.now ?? Date.now;
	const pingIntervalMs = options.pingIntervalMs ?? 10_000;
	const pongTimeoutMs = options.pongTimeoutMs ?? 30_000;
	const connectTimeoutMs = options.connectTimeoutMs ?? 15_000;

	return new Promise<RpcClient>((resolveOpen, rejectOpen) => {
		let ws: WebSocket;
		try {
			ws = new Ctor(options.url);
		} catch (err) {
			rejectOpen(
				openError(
					options.url,
					err instanceof Error ? err.message : String(err),
				),
			);
			return;
		}
		let opened = false;
		let closed = false;
		let lastError: string | undefined;
		let nextId = 1;
		let lastInboundAt = now();
		let heartbeat: ReturnType<typeof setInterval> | undefined;
		let watchdog: ReturnType<typeof setTimeout> | undefined;
		const pending = new Map<string, Pending>();
		const streams = new Map<string, StreamEntry>();
		const closeListeners = new Set<(reason: string, silent: boolean) => void>();

		const connectTimer = setTimeout(() => {
			if (opened || closed) return;
			shutdown(`websocket open timed out after ${connectTimeoutMs} ms`, true);
		}, connectTimeoutMs);

		function send(text: string): boolean {
			// send() after close does not throw in Bun, it just buffers (notes/bun.md §5).
			if (closed || ws.readyState !== OPEN) return false;
			ws.send(text);
			return true;
		}

		function shutdown(reason: string, hard = false, silent = false): void {
			if (closed) return;
			closed = true;
			clearTimeout(connectTimer);
			if (heartbeat) clearInterval(heartbeat);
			if (watchdog) clearTimeout(watchdog);
			ws.removeEventListener("message", onMessage);
			try {
				const terminate = (ws as WebSocket & { terminate?: () => void })
					.terminate;
				if (ws.readyState <= OPEN) {
					// A dead peer never completes a close handshake: drop the socket outright.
					if (hard && typeof terminate === "function") terminate.call(ws);
					else ws.close(1000, "closing");
				}
			} catch {
				// Already closing; nothing more to do.
			}
			if (!opened) {
				rejectOpen(openError(options.url, lastError ?? reason));
				return;
			}
			for (const [, p] of pending) {
				if (p.timer) clearTimeout(p.timer);
				p.reject(
					new T3Error("DISCONNECTED", `${p.tag}: connection lost (${reason})`),
				);
			}
			pending.clear();
			const ended = [...streams.values()];
			streams.clear();
			for (const s of ended)
				safely(() => s.onEnd?.({ ok: false, kind: "disconnected", reason }));
			for (const listener of [...closeListeners])
				safely(() => listener(reason, silent));
			closeListeners.clear();
		}

		function safely(fn: () => void): void {
			try {
				fn();
			} catch (err) {
				log.error("rpc listener threw", { err });
			}
		}

		function onMessage(ev: MessageEvent): void {
			lastInboundAt = now();
			const text =
				typeof ev.data === "string"
					? ev.data
					: new TextDecoder().decode(ev.data as ArrayBuffer);
			for (const msg of decodeFrame(text)) {
				switch (msg._tag) {
					case "Pong":
						break;
					case "Chunk": {
						const s = streams.get(msg.requestId);
						if (!s) {
							// Still ack: an unacked chunk would stall a stream we no longer track.
							send(encodeAck(msg.requestId));
							break;
						}
						for (const value of msg.values) safely(() => s.onItem(value));
						// One Ack per Chunk, after its values were handed over (PROTOCOL.md §4.4).
						send(encodeAck(msg.requestId));
						break;
					}
					case "Exit": {
						const result = decodeExit(msg.exit);
						const p = pending.get(msg.requestId);
						if (p) {
							pending.delete(msg.requestId);
							if (p.timer) clearTimeout(p.timer);
							if (result.ok) p.resolve(result.value);
							else p.reject(exitError(p.tag, result));
							break;
						}
						const s = streams.get(msg.requestId);
						if (s) {
							streams.delete(msg.requestId);
							safely(() => s.onEnd?.(result));
						}
						break;
					}
					case "Defect":
						log.warn("server reported a connection defect", {
							defect: defectText(msg.defect),
						});
						break;
					case "unknown":
						log.warn("ignoring unknown rpc frame", {
							frame: redact(String(JSON.stringify(msg.raw)), 200),
						});
						break;
				}
			}
		}

		/**
		 * Declares the socket dead once the server has sent nothing for `pongTimeoutMs` (a stopped
		 * process keeps its socket open). One timer, re-armed for the remaining time when it fires,
		 * so detection is on time without a timer reset per frame.
		 */
		function watchSilence(delayMs: number): void {
			watchdog = setTimeout(() => {
				if (closed) return;
				const silentMs = now() - lastInboundAt;
				if (silentMs < pongTimeoutMs) {
					watchSilence(pongTimeoutMs - silentMs);
					return;
				}
				log.warn("websocket heartbeat timed out", { silentMs });
				shutdown(`no answer to ping for ${pongTimeoutMs} ms`, true, true);
			}, delayMs);
		}

		ws.addEventListener("open", () => {
			if (closed) return;
			opened = true;
			clearTimeout(connectTimer);
			lastInboundAt = now();
			heartbeat = setInterval(() => send(encodePing()), pingIntervalMs);
			watchSilence(pongTimeoutMs);
			resolveOpen(client);
		});
		ws.addEventListener("message", onMessage);
		ws.addEventListener("error", (ev) => {
			lastError = errorFromEvent(ev);
		});
		ws.addEventListener("close", (ev) => {
			const reason =
				lastError ??
				`websocket closed (${ev.code}${ev.reason ? ` ${ev.reason}` : ""})`;
			shutdown(reason);
		});

		const client: RpcClient = {
			request(tag, payload, opts) {
				return new Promise((resolve, reject) => {
					if (closed || ws.readyState !== OPEN) {
						reject(new T3Error("DISCONNECTED", `${tag}: not connected`));
						return;
					}
					const id = String(nextId++);
					const timeoutMs = opts?.timeoutMs ?? 30_000;
					const timer = setTimeout(() => {
						if (!pending.delete(id)) return;
						reject(
							new T3Error("TIMEOUT", `${tag}: no reply within ${timeoutMs} ms`),
						);
					}, timeoutMs);
					pending.set(id, { resolve, reject, timer, tag });
					send(encodeRequest(id, tag, payload));
				});
			},
			stream(tag, payload, onItem, onEnd) {
				const id = String(nextId++);
				if (closed || ws.readyState !== OPEN) {
					queueMicrotask(() =>
						onEnd?.({
							ok: false,
							kind: "disconnected",
							reason: "not connected",
						}),
					);
					return { cancel() {} };
				}
				const entry: StreamEntry = { onItem, tag };
				if (onEnd) entry.onEnd = onEnd;
				streams.set(id, entry);
				send(encodeRequest(id, tag, payload));
				return {
					cancel() {
						if (!streams.delete(id)) return;
						send(encodeInterrupt(id));
					},
				};
			},
			onClose(listener) {
				if (closed) {
					queueMicrotask(() => listener("closed", false));
					return () => {};
				}
				closeListeners.add(listener);
				return () => closeListeners.delete(listener);
			},
			close() {
				shutdown("closed by client");
			},
			isOpen() {
				return !closed && ws.readyState === OPEN;
			},
		};
	});
}
