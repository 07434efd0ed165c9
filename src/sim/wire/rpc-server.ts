/**
 * Room `sim/wire/`: what the simulator puts on the wire: HTTP routes, auth and pairing, the RPC
 * connection and its method table, streams, and the hostile mode. May import `sim/engine`,
 * `sim/agent`, `sim/repo` and the `sim/` root.
 */
/**
 * One `/ws` connection speaking Effect RPC over JSON (PROTOCOL.md §4): Request / Ack /
 * Interrupt / Ping / Eof in, Chunk / Exit / Defect / Pong out. Streams honour the Ack latch:
 * after a Chunk the next one waits for the client's Ack, values queue (and batch) meanwhile.
 */
import type { ServerWebSocket } from "bun";
import type { SimContext } from "../context.ts";
import type { Outcome } from "../engine/engine.ts";
import { exitFrame, interruptFrame } from "./rpc-frames.ts";
import { type Method, methodsFor, type Push } from "./rpc-methods.ts";

export { v1Shell } from "./v1-surface.ts";

export interface ConnData {
	id: number;
	scopes: string[];
	conn?: Connection;
}

export interface Connection {
	onMessage(raw: string | Buffer): void;
	onClose(): void;
	/** Streams whose last Chunk is still unacked. */
	unacked(): number;
	/** Close abruptly (the client sees 1006). */
	terminate(): void;
}

interface Stream {
	queue: unknown[];
	inFlight: boolean;
	dispose: () => void;
}

/** Values per Chunk; a real server batches a handful (OBSERVED.md §5.1). */
const MAX_BATCH = 64;

export function createConnection(
	ctx: SimContext,
	ws: ServerWebSocket<ConnData>,
): Connection {
	const methods = methodsFor(ctx);
	const streams = new Map<string, Stream>();
	/** Calls whose reply is held back by setDelay, cancellable by Interrupt. */
	const delayed = new Map<string, ReturnType<typeof setTimeout>>();
	let closed = false;

	function send(frame: unknown): void {
		if (closed || ctx.faults.blackholed) return;
		if (ctx.wire.recording)
			ctx.wire.frames.push({ dir: "send", conn: ws.data.id, frame });
		// 0 = Bun dropped the message under backpressure (notes/bun.md §5); a stream with a hole
		// in it would be silently wrong, so end the connection and let the client resume.
		const sent = ctx.hostile ? ctx.hostile.rewrite(frame) : frame;
		if (ws.send(JSON.stringify(sent)) === 0) terminate();
	}

	function pump(requestId: string, stream: Stream): void {
		if (stream.inFlight || stream.queue.length === 0) return;
		const values = stream.queue.splice(0, MAX_BATCH);
		stream.inFlight = true;
		send({ _tag: "Chunk", requestId, values });
		if (!closed && !ctx.faults.blackholed) ctx.outcomes.noteSent(values);
	}

	function reply(requestId: string, outcome: Outcome): void {
		const delay = ctx.faults.delayMs;
		if (delay <= 0) {
			send(exitFrame(requestId, outcome));
			return;
		}
		delayed.set(
			requestId,
			setTimeout(() => {
				delayed.delete(requestId);
				send(exitFrame(requestId, outcome));
			}, delay),
		);
	}

	function startStream(
		requestId: string,
		method: Method,
		payload: Record<string, unknown>,
	): Outcome | undefined {
		const stream: Stream = { queue: [], inFlight: false, dispose: () => {} };
		streams.set(requestId, stream);
		const push: Push = (values) => {
			if (!streams.has(requestId)) return;
			stream.queue.push(...values);
			pump(requestId, stream);
		};
		const started = method.stream?.(payload, push);
		if (typeof started === "function") {
			stream.dispose = started;
			return undefined;
		}
		streams.delete(requestId);
		return started;
	}

	function request(m: Record<string, unknown>): void {
		const requestId = String(m.id);
		const tag = String(m.tag);
		ctx.count(tag);
		if (streams.has(requestId) || delayed.has(requestId)) return; // duplicate in-flight id: dropped
		const method = methods[tag];
		if (!method) {
			send(exitFrame(requestId, { die: `Unknown request tag: ${tag}` }));
			return;
		}
		if (!ws.data.scopes.includes(method.scope)) {
			send(
				exitFrame(requestId, {
					fail: {
						_tag: "EnvironmentAuthorizationError",
						message: `The authenticated token is missing required scope: ${method.scope}.`,
						requiredScope: method.scope,
					},
				}),
			);
			return;
		}
		const payload = (
			m.payload && typeof m.payload === "object" ? m.payload : {}
		) as Record<string, unknown>;
		const drops = ctx.faults.dropReplies.get(tag) ?? 0;
		if (drops > 0) ctx.faults.dropReplies.set(tag, drops - 1);
		let outcome: Outcome | undefined;
		if (method.stream) {
			const open = () => {
				const failed = startStream(requestId, method, payload);
				if (failed) send(exitFrame(requestId, failed));
			};
			if (ctx.faults.delayMs > 0 && drops === 0) {
				delayed.set(
					requestId,
					setTimeout(() => {
						delayed.delete(requestId);
						open();
					}, ctx.faults.delayMs),
				);
			} else if (drops === 0) open();
			else startStream(requestId, method, payload);
		} else {
			outcome = method.call?.(payload) ?? { die: "no handler" };
			if (drops === 0) reply(requestId, outcome);
		}
		// A lost reply: the work is done, the answer never arrives and the socket dies.
		if (drops > 0) terminate();
	}

	function interrupt(requestId: string): void {
		const timer = delayed.get(requestId);
		if (timer) {
			clearTimeout(timer);
			delayed.delete(requestId);
			send(interruptFrame(requestId));
			return;
		}
		const stream = streams.get(requestId);
		if (!stream) return;
		streams.delete(requestId);
		stream.dispose();
		send(interruptFrame(requestId));
	}

	function handle(m: unknown): void {
		if (!m || typeof m !== "object") {
			send({
				_tag: "Defect",
				defect: {
					name: "ParseError",
					message: "Expected an RPC message object",
				},
			});
			return;
		}
		const message = m as Record<string, unknown>;
		switch (message._tag) {
			case "Request":
				request(message);
				return;
			case "Ack": {
				const requestId = String(message.requestId);
				const stream = streams.get(requestId);
				if (!stream) return;
				stream.inFlight = false;
				pump(requestId, stream);
				return;
			}
			case "Interrupt":
				interrupt(String(message.requestId));
				return;
			case "Ping":
				send({ _tag: "Pong" });
				return;
			case "Eof":
				return;
			default:
				send({
					_tag: "Defect",
					defect: {
						name: "ParseError",
						message: `Unknown message tag: ${String(message._tag)}`,
					},
				});
		}
	}

	function dispose(): void {
		closed = true;
		for (const stream of streams.values()) stream.dispose();
		streams.clear();
		for (const timer of delayed.values()) clearTimeout(timer);
		delayed.clear();
	}

	function terminate(): void {
		if (closed) return;
		dispose();
		ws.terminate();
	}

	return {
		onMessage(raw) {
			const text = typeof raw === "string" ? raw : raw.toString("utf8");
			let parsed: unknown;
			try {
				parsed = JSON.parse(text);
			} catch (error) {
				if (ctx.wire.recording)
					ctx.wire.frames.push({ dir: "recv", conn: ws.data.id, frame: text });
				const e = error as Error;
				send({
					_tag: "Defect",
					defect: { name: e.name, message: e.message },
				});
				return;
			}
			if (ctx.wire.recording)
				ctx.wire.frames.push({ dir: "recv", conn: ws.data.id, frame: parsed });
			for (const m of Array.isArray(parsed) ? parsed : [parsed]) handle(m);
		},
		onClose: dispose,
		unacked: () => [...streams.values()].filter((s) => s.inFlight).length,
		terminate,
	};
}
