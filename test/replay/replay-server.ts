/**
 * A loopback T3 server that answers with the frames a real pre-release server sent
 * (captures-v2). It is deliberately not the simulator: the client is checked against
 * recorded reality, so the two cannot share one misreading of the protocol. Test-only.
 */
import type { Server, ServerWebSocket } from "bun";
import {
	type CaptureLine,
	loadCapture,
	type RecordedCall,
	readCaptureJson,
	recordedCalls,
} from "./captures.ts";

type Json = Record<string, unknown>;

export interface ReplayServerOptions {
	/** ws-*.jsonl capture whose recorded answers to replay. */
	capture?: string;
	token?: string;
	descriptor?: Json;
	/** Scopes reported by /api/auth/session for the right token. */
	scopes?: string[];
	/** After sending a shell chunk with a matching value, pause the shell stream until release(). */
	holdWhen?: (value: Json) => boolean;
	/** Drop the socket (no answer) the first time this RPC tag arrives. */
	dropOnFirst?: string;
}

interface ConnState {
	id: number;
	stalled: boolean;
	streams: Map<string, StreamState>;
}

interface StreamState {
	requestId: string;
	frames: { t: number; frame: Json }[];
	next: number;
	awaitingAck: boolean;
	call: RecordedCall;
}

export interface ReplayServer {
	url: string;
	/** Every client frame received, by connection number. */
	received: { conn: number; frame: Json }[];
	/** Payloads of every subscribeShell request, in order. */
	shellRequests(): Json[];
	requests(tag: string): Json[];
	chunksSent: number;
	acksReceived: number;
	/** Shell chunks still to send on the current subscription (0 = the recording is exhausted). */
	pendingShellChunks(): number;
	threadId: string | null;
	dropSockets(): void;
	/** Stop answering anything (Ping included) on the open sockets: a half-open peer. */
	stall(): void;
	release(): void;
	stop(): Promise<void>;
}

export const REPLAY_TOKEN = "replay-token";

export const PROTOCOL2_DESCRIPTOR: Json = {
	environmentId: "replay-env",
	label: "replay",
	platform: { os: "linux", arch: "x64" },
	serverVersion: "0.1.0",
	orchestrationProtocolVersion: 2,
	capabilities: {},
};

const COLLECTIONS: Record<string, string> = {
	"run.created": "runs",
	"run.updated": "runs",
	"run-attempt.created": "attempts",
	"run-attempt.updated": "attempts",
	"node.updated": "nodes",
	"message.updated": "messages",
	"turn-item.updated": "turnItems",
	"runtime-request.updated": "runtimeRequests",
	"provider-session.attached": "providerSessions",
	"provider-session.updated": "providerSessions",
	"provider-thread.updated": "providerThreads",
	"provider-turn.updated": "providerTurns",
	"checkpoint.captured": "checkpoints",
	"checkpoint-scope.created": "checkpointScopes",
	"plan.updated": "plans",
};

function isRecord(v: unknown): v is Json {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Upsert-by-id of the recorded thread events onto the recorded thread snapshot (§8.3). */
function applyEvent(projection: Json, event: Json): void {
	const type = String(event.type);
	const payload = event.payload;
	if (!isRecord(payload)) return;
	if (type.startsWith("thread.")) {
		projection.thread = { ...(projection.thread as Json), ...payload };
		return;
	}
	const key = COLLECTIONS[type];
	if (!key) return;
	const rows = (
		Array.isArray(projection[key]) ? projection[key] : []
	) as Json[];
	const at = rows.findIndex((r) => r.id === payload.id);
	if (at >= 0) rows[at] = payload;
	else rows.push(payload);
	projection[key] = rows;
}

export function startReplayServer(
	options: ReplayServerOptions = {},
): ReplayServer {
	const token = options.token ?? REPLAY_TOKEN;
	const descriptor = options.descriptor ?? PROTOCOL2_DESCRIPTOR;
	const scopes = options.scopes ?? [
		"orchestration:read",
		"orchestration:operate",
	];
	const lines: CaptureLine[] = options.capture
		? loadCapture(options.capture)
		: [];
	const calls = recordedCalls(lines);
	const shellCalls = calls.filter(
		(c) => c.tag === "orchestration.subscribeShell",
	);
	const used = new Set<RecordedCall>();

	// The thread as the capture saw it: recorded snapshot + recorded events, by capture time.
	const threadCall = calls.find(
		(c) =>
			c.tag === "orchestration.subscribeThread" &&
			c.frames.some(
				(f) =>
					f.frame._tag === "Chunk" &&
					(f.frame.values as Json[]).some((v) => v.kind === "snapshot"),
			),
	);
	let baseProjection: Json | null = null;
	const threadEvents: { t: number; event: Json }[] = [];
	for (const f of threadCall?.frames ?? []) {
		if (f.frame._tag !== "Chunk") continue;
		for (const v of f.frame.values as Json[]) {
			if (v.kind === "snapshot" && !baseProjection)
				baseProjection = v.projection as Json;
			if (v.kind === "event" && isRecord(v.event))
				threadEvents.push({ t: f.t, event: v.event });
		}
	}
	if (!baseProjection) {
		baseProjection = (
			readCaptureJson("http-after-recovery-thread.json") as { projection: Json }
		).projection;
	}
	const threadId = isRecord(baseProjection.thread)
		? String(baseProjection.thread.id)
		: null;
	let shellCursorT = 0;

	const received: { conn: number; frame: Json }[] = [];
	const sockets = new Set<ServerWebSocket<ConnState>>();
	const tickets = new Set<string>();
	let connCount = 0;
	let ticketCount = 0;
	let held = false;
	let heldStream: {
		ws: ServerWebSocket<ConnState>;
		stream: StreamState;
	} | null = null;
	let droppedOnce = false;
	let currentShell: StreamState | null = null;

	function projectionAt(t: number): Json {
		const projection = structuredClone(baseProjection) as Json;
		for (const e of threadEvents) if (e.t <= t) applyEvent(projection, e.event);
		return projection;
	}

	function send(ws: ServerWebSocket<ConnState>, frame: Json): void {
		if (ws.data.stalled) return;
		ws.send(JSON.stringify(frame));
	}

	function pump(ws: ServerWebSocket<ConnState>, stream: StreamState): void {
		while (
			!stream.awaitingAck &&
			!held &&
			stream.next < stream.frames.length &&
			!ws.data.stalled
		) {
			const { t, frame } = stream.frames[stream.next] as {
				t: number;
				frame: Json;
			};
			if (frame._tag === "Exit" && stream.call.interruptedAt !== null) return; // answers an Interrupt only
			stream.next += 1;
			send(ws, { ...frame, requestId: stream.requestId });
			if (frame._tag !== "Chunk") return;
			api.chunksSent += 1;
			stream.awaitingAck = true;
			if (stream.call.tag === "orchestration.subscribeShell") {
				shellCursorT =
					stream.next >=
					stream.frames.filter((f) => f.frame._tag === "Chunk").length
						? Number.POSITIVE_INFINITY
						: t;
				if (
					options.holdWhen &&
					(frame.values as Json[]).some((v) => options.holdWhen?.(v))
				) {
					held = true;
					heldStream = { ws, stream };
				}
			}
		}
	}

	function nextRecorded(tag: string, payload: Json): RecordedCall | undefined {
		const candidates = calls.filter((c) => c.tag === tag && !used.has(c));
		const match =
			candidates.find(
				(c) => payload.type === undefined || c.payload.type === payload.type,
			) ?? undefined;
		if (match) used.add(match);
		return match;
	}

	function onRequest(ws: ServerWebSocket<ConnState>, frame: Json): void {
		const id = String(frame.id);
		const tag = String(frame.tag);
		const payload = isRecord(frame.payload) ? frame.payload : {};
		if (options.dropOnFirst === tag && !droppedOnce) {
			droppedOnce = true;
			ws.close(1012, "replay: dropped on purpose");
			return;
		}
		if (tag === "orchestration.subscribeShell") {
			const index = received.filter((r) => r.frame.tag === tag).length - 1;
			const call = shellCalls[Math.min(index, shellCalls.length - 1)];
			if (!call) {
				send(ws, {
					_tag: "Chunk",
					requestId: id,
					values: [{ kind: "synchronized" }],
				});
				return;
			}
			used.add(call);
			const stream: StreamState = {
				requestId: id,
				frames: call.frames,
				next: 0,
				awaitingAck: false,
				call,
			};
			ws.data.streams.set(id, stream);
			currentShell = stream;
			pump(ws, stream);
			return;
		}
		if (tag === "server.getConfig") {
			send(ws, {
				_tag: "Exit",
				requestId: id,
				exit: readCaptureJson("ws-server.getConfig.json") as Json,
			});
			return;
		}
		const recorded = nextRecorded(tag, payload);
		const exit = recorded?.frames.find((f) => f.frame._tag === "Exit");
		if (exit) {
			send(ws, { _tag: "Exit", requestId: id, exit: exit.frame.exit });
			return;
		}
		if (tag === "orchestration.dispatchCommand") {
			send(ws, {
				_tag: "Exit",
				requestId: id,
				exit: {
					_tag: "Failure",
					cause: [
						{
							_tag: "Fail",
							error: {
								_tag: "OrchestrationV2DispatchCommandError",
								commandId: payload.commandId,
								commandType: payload.type,
								message: `replay: nothing recorded for ${String(payload.type)}`,
							},
						},
					],
				},
			});
			return;
		}
		send(ws, {
			_tag: "Exit",
			requestId: id,
			exit: {
				_tag: "Failure",
				cause: [{ _tag: "Die", defect: `Unknown request tag: ${tag}` }],
			},
		});
	}

	function onMessage(ws: ServerWebSocket<ConnState>, text: string): void {
		let frame: unknown;
		try {
			frame = JSON.parse(text);
		} catch {
			send(ws, {
				_tag: "Defect",
				defect: { name: "SyntaxError", message: "JSON Parse error" },
			});
			return;
		}
		for (const f of Array.isArray(frame) ? frame : [frame]) {
			if (!isRecord(f)) continue;
			received.push({ conn: ws.data.id, frame: f });
			if (ws.data.stalled) continue;
			switch (f._tag) {
				case "Ping":
					send(ws, { _tag: "Pong" });
					break;
				case "Request":
					onRequest(ws, f);
					break;
				case "Ack": {
					api.acksReceived += 1;
					const stream = ws.data.streams.get(String(f.requestId));
					if (stream) {
						stream.awaitingAck = false;
						pump(ws, stream);
					}
					break;
				}
				case "Interrupt": {
					const rid = String(f.requestId);
					const stream = ws.data.streams.get(rid);
					ws.data.streams.delete(rid);
					const exit = stream?.frames.find((x) => x.frame._tag === "Exit");
					send(ws, {
						_tag: "Exit",
						requestId: rid,
						exit: exit?.frame.exit ?? {
							_tag: "Failure",
							cause: [{ _tag: "Interrupt", fiberId: 1 }],
						},
					});
					break;
				}
			}
		}
	}

	function bearer(req: Request): string | null {
		const h = req.headers.get("authorization");
		return h?.startsWith("Bearer ") ? h.slice(7) : null;
	}

	const json = (body: unknown, status = 200) => Response.json(body, { status });
	const authInvalid = () =>
		json(
			{
				_tag: "EnvironmentAuthInvalidError",
				code: "auth_invalid",
				reason: "invalid_credential",
				traceId: "replay",
			},
			401,
		);

	const server: Server<ConnState> = Bun.serve<ConnState>({
		port: 0,
		hostname: "127.0.0.1",
		fetch(req, srv) {
			const url = new URL(req.url);
			const path = url.pathname;
			if (path === "/.well-known/t3/environment") return json(descriptor);
			if (path === "/api/auth/session") {
				if (bearer(req) !== token)
					return json({
						authenticated: false,
						auth: { policy: "remote-reachable" },
					});
				return json({
					authenticated: true,
					scopes,
					sessionMethod: "bearer-access-token",
					expiresAt: "2099-01-01T00:00:00Z",
				});
			}
			if (path === "/api/auth/websocket-ticket" && req.method === "POST") {
				if (bearer(req) !== token) return authInvalid();
				ticketCount += 1;
				const ticket = `ticket-${ticketCount}`;
				tickets.add(ticket);
				return json({ ticket, expiresAt: "2099-01-01T00:00:00Z" });
			}
			if (path === "/api/orchestration/shell") {
				if (bearer(req) !== token) return authInvalid();
				const first = shellCalls[0]?.frames[0]?.frame.values as
					| Json[]
					| undefined;
				return json(
					first?.[0]?.snapshot ?? {
						schemaVersion: 2,
						snapshotSequence: 0,
						projects: [],
						threads: [],
						archivedThreads: [],
					},
				);
			}
			const threadMatch = /^\/api\/orchestration\/threads\/([^/]+)$/.exec(path);
			if (threadMatch) {
				if (bearer(req) !== token) return authInvalid();
				if (decodeURIComponent(threadMatch[1] as string) !== threadId) {
					return json(
						{
							_tag: "EnvironmentResourceNotFoundError",
							code: "not_found",
							reason: "thread_not_found",
							traceId: "replay",
						},
						404,
					);
				}
				return json({
					snapshotSequence: 0,
					projection: projectionAt(shellCursorT),
				});
			}
			if (path === "/ws") {
				const ticket = url.searchParams.get("wsTicket");
				if (!ticket || !tickets.has(ticket)) return authInvalid();
				tickets.delete(ticket); // single use, like third-party gateways (§2.4)
				connCount += 1;
				if (
					srv.upgrade(req, {
						data: { id: connCount, stalled: false, streams: new Map() },
					})
				)
					return undefined;
				return new Response("upgrade failed", { status: 400 });
			}
			return new Response(
				"No static directory configured and no dev URL set.",
				{ status: 503 },
			);
		},
		websocket: {
			open(ws) {
				sockets.add(ws);
			},
			message(ws, message) {
				onMessage(
					ws,
					typeof message === "string"
						? message
						: new TextDecoder().decode(message),
				);
			},
			close(ws) {
				sockets.delete(ws);
			},
		},
	});

	const api: ReplayServer = {
		url: `http://127.0.0.1:${server.port}`,
		received,
		shellRequests: () =>
			received
				.filter((r) => r.frame.tag === "orchestration.subscribeShell")
				.map((r) => r.frame.payload as Json),
		requests: (tag) =>
			received
				.filter((r) => r.frame.tag === tag)
				.map((r) => r.frame.payload as Json),
		chunksSent: 0,
		acksReceived: 0,
		pendingShellChunks() {
			if (!currentShell) return Number.POSITIVE_INFINITY;
			return currentShell.frames
				.slice(currentShell.next)
				.filter((f) => f.frame._tag === "Chunk").length;
		},
		threadId,
		dropSockets() {
			for (const ws of sockets) ws.close(1012, "replay: dropped");
		},
		stall() {
			for (const ws of sockets) ws.data.stalled = true;
		},
		release() {
			held = false;
			const h = heldStream;
			heldStream = null;
			if (h) pump(h.ws, h.stream);
		},
		async stop() {
			await server.stop(true);
		},
	};
	return api;
}
