/**
 * A tiny hostile T3 server on loopback for the bad-input sweep. By default it behaves well
 * enough for a machine to come online (descriptor, session, ticket, shell, one thread, and a
 * `/ws` that answers `subscribeShell` with a snapshot and `synchronized`); each case overrides
 * one route or one socket exchange to send something malformed. It records what the client
 * sent (Acks, Pings, request tags) so a case can check the client's side of the protocol.
 */
import type { Server, ServerWebSocket } from "bun";

export const HOSTILE_TOKEN = "hostile-token";
export const PROJECT = {
	id: "p-hostile",
	title: "demo",
	workspaceRoot: "/srv/hostile/demo",
};
export const THREAD_ID = "t-hostile";

export function threadShell(
	overrides: Record<string, unknown> = {},
): Record<string, unknown> {
	return {
		id: THREAD_ID,
		projectId: PROJECT.id,
		title: "hostile thread",
		modelSelection: { instanceId: "claudeAgent", model: "claude-opus-5" },
		latestRunId: "r-1",
		activeRunId: null,
		status: "completed",
		pendingRuntimeRequest: null,
		latestVisibleMessage: null,
		...overrides,
	};
}

export function shellSnapshot(
	overrides: Record<string, unknown> = {},
): Record<string, unknown> {
	return {
		schemaVersion: 2,
		snapshotSequence: 10,
		projects: [{ ...PROJECT, defaultModelSelection: null }],
		threads: [threadShell()],
		archivedThreads: [],
		...overrides,
	};
}

export function threadDetail(
	overrides: Record<string, unknown> = {},
): Record<string, unknown> {
	return {
		snapshotSequence: 10,
		projection: {
			thread: threadShell(),
			runs: [
				{
					id: "r-1",
					threadId: THREAD_ID,
					ordinal: 1,
					userMessageId: "m-1",
					status: "completed",
					requestedAt: "2026-11-29T12:00:00.000Z",
					startedAt: "2026-11-29T12:00:00.100Z",
					completedAt: "2026-11-29T12:00:01.000Z",
				},
			],
			messages: [
				{ id: "m-1", runId: "r-1", role: "user", text: "hi" },
				{ id: "m-2", runId: "r-1", role: "assistant", text: "hello" },
			],
			turnItems: [],
			runtimeRequests: [],
			providerSessions: [],
			...overrides,
		},
	};
}

export const descriptor = (overrides: Record<string, unknown> = {}) => ({
	environmentId: "env-hostile",
	label: "hostile",
	serverVersion: "0.1.0-hostile",
	orchestrationProtocolVersion: 2,
	...overrides,
});

export const session = (overrides: Record<string, unknown> = {}) => ({
	authenticated: true,
	scopes: ["orchestration:read", "orchestration:operate"],
	sessionMethod: "bearer-access-token",
	...overrides,
});

export type Route = "descriptor" | "session" | "ticket" | "shell" | "thread";

/** The socket side of one connection, as a case sees it. */
export interface HostileSocket {
	/** Raw text (may be anything, on purpose). */
	sendText(text: string): void;
	send(message: unknown): void;
	chunk(requestId: string, values: unknown[]): void;
	exit(requestId: string, exit: unknown): void;
	/** The well-behaved answer to subscribeShell: snapshot + synchronized in one Chunk. */
	goodSubscribe(requestId: string): void;
	/** Resolves when the client acks `requestId` (or after `timeoutMs`, false). */
	waitAck(requestId: string, timeoutMs?: number): Promise<boolean>;
	close(): void;
}

export interface HostileOptions {
	/** Return a Response to override a route, or undefined for the good default. */
	http?: (route: Route, request: Request) => Response | undefined;
	/** Handles a Request frame; return false to fall back to the default behaviour. */
	onRequest?: (
		tag: string,
		id: string,
		payload: unknown,
		ws: HostileSocket,
	) => boolean | undefined;
	/** Runs once each socket opens. */
	onOpen?: (ws: HostileSocket) => void;
}

export interface HostileT3 {
	url: string;
	token: string;
	/** Request ids the client acked, in order. */
	acks: string[];
	pings(): number;
	requests: string[];
	connections(): number;
	stop(): Promise<void>;
}

interface Conn {
	socket: HostileSocket;
	ackWaiters: Map<string, () => void>;
}

export function startHostileT3(options: HostileOptions = {}): HostileT3 {
	const acks: string[] = [];
	const requests: string[] = [];
	let pings = 0;
	let connections = 0;
	const sockets = new Set<ServerWebSocket<Conn>>();

	const route = (path: string, method: string): Route | undefined => {
		if (method === "GET" && path === "/.well-known/t3/environment")
			return "descriptor";
		if (method === "GET" && path === "/api/auth/session") return "session";
		if (method === "POST" && path === "/api/auth/websocket-ticket")
			return "ticket";
		if (method === "GET" && path === "/api/orchestration/shell") return "shell";
		if (method === "GET" && path.startsWith("/api/orchestration/threads/"))
			return "thread";
		return undefined;
	};

	const defaults: Record<Route, () => Response> = {
		descriptor: () => Response.json(descriptor()),
		session: () => Response.json(session()),
		ticket: () =>
			Response.json({ ticket: crypto.randomUUID(), expiresAt: null }),
		shell: () => Response.json(shellSnapshot()),
		thread: () => Response.json(threadDetail()),
	};

	const server: Server<Conn> = Bun.serve<Conn>({
		hostname: "127.0.0.1",
		port: 0,
		idleTimeout: 0,
		fetch(request, srv) {
			const url = new URL(request.url);
			if (url.pathname === "/ws") {
				const conn = { ackWaiters: new Map() } as unknown as Conn;
				if (srv.upgrade(request, { data: conn })) return undefined;
				return new Response("upgrade expected", { status: 400 });
			}
			const which = route(url.pathname, request.method);
			if (!which) return Response.json({ _tag: "NotFound" }, { status: 404 });
			return options.http?.(which, request) ?? defaults[which]();
		},
		websocket: {
			maxPayloadLength: 64 * 1024 * 1024,
			open(ws) {
				connections += 1;
				sockets.add(ws);
				const conn = ws.data;
				const send = (text: string) => {
					if (ws.readyState === 1) ws.send(text);
				};
				conn.socket = {
					sendText: send,
					send: (message) => send(JSON.stringify(message)),
					chunk: (requestId, values) =>
						send(JSON.stringify({ _tag: "Chunk", requestId, values })),
					exit: (requestId, exit) =>
						send(JSON.stringify({ _tag: "Exit", requestId, exit })),
					goodSubscribe(requestId) {
						conn.socket.chunk(requestId, [
							{ kind: "snapshot", snapshot: shellSnapshot() },
							{ kind: "synchronized" },
						]);
					},
					waitAck(requestId, timeoutMs = 2_000) {
						if (acks.includes(requestId)) return Promise.resolve(true);
						return new Promise((resolve) => {
							const timer = setTimeout(() => resolve(false), timeoutMs);
							conn.ackWaiters.set(requestId, () => {
								clearTimeout(timer);
								resolve(true);
							});
						});
					},
					close: () => ws.close(),
				};
				options.onOpen?.(conn.socket);
			},
			message(ws, message) {
				let frame: {
					_tag?: string;
					id?: string;
					tag?: string;
					requestId?: string;
					payload?: unknown;
				};
				try {
					frame = JSON.parse(String(message));
				} catch {
					return;
				}
				const conn = ws.data;
				if (frame._tag === "Ping") {
					pings += 1;
					conn.socket.send({ _tag: "Pong" });
					return;
				}
				if (frame._tag === "Ack" && frame.requestId) {
					acks.push(frame.requestId);
					conn.ackWaiters.get(frame.requestId)?.();
					conn.ackWaiters.delete(frame.requestId);
					return;
				}
				if (frame._tag !== "Request" || !frame.id || !frame.tag) return;
				requests.push(frame.tag);
				const handled = options.onRequest?.(
					frame.tag,
					frame.id,
					frame.payload,
					conn.socket,
				);
				if (handled) return;
				if (frame.tag === "orchestration.subscribeShell")
					conn.socket.goodSubscribe(frame.id);
				// Anything else gets no answer by default (cases that need one say so).
			},
			close(ws) {
				sockets.delete(ws);
			},
		},
	});

	return {
		url: `http://127.0.0.1:${server.port}`,
		token: HOSTILE_TOKEN,
		acks,
		pings: () => pings,
		requests,
		connections: () => connections,
		async stop() {
			for (const ws of sockets) ws.close();
			await server.stop(true);
		},
	};
}

/** Effect-RPC exit shapes (PROTOCOL.md §4.3). */
export const exits = {
	success: (value: unknown) => ({ _tag: "Success", value }),
	die: (defect: unknown) => ({
		_tag: "Failure",
		cause: [{ _tag: "Die", defect }],
	}),
	fail: (error: unknown) => ({
		_tag: "Failure",
		cause: [{ _tag: "Fail", error }],
	}),
};
