/**
 * One `/ws` connection speaking Effect RPC over JSON (PROTOCOL.md §4): Request / Ack /
 * Interrupt / Ping / Eof in, Chunk / Exit / Defect / Pong out. Streams honour the Ack latch:
 * after a Chunk the next one waits for the client's Ack, values queue (and batch) meanwhile.
 */
import type { ServerWebSocket } from "bun";
import { simHas } from "../compat.ts";
import type { SimContext } from "../context.ts";
import type { Outcome } from "../engine/engine.ts";
import { OPERATE_SCOPE, READ_SCOPE } from "./auth.ts";
import { openConfigStream } from "./config-stream.ts";
import { turnDiff } from "./diff-rpc.ts";
import { searchThreads } from "./search-threads.ts";
import { serverConfig } from "./server-config.ts";
import { openShellStream } from "./shell-stream.ts";
import { openThreadStream } from "./thread-stream.ts";
import { getTurnItem } from "./turn-item-rpc.ts";

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

type Push = (values: unknown[]) => void;
interface Method {
	scope: string;
	call?: (payload: Record<string, unknown>) => Outcome;
	stream?: (
		payload: Record<string, unknown>,
		push: Push,
	) => Outcome | (() => void);
}

interface Stream {
	queue: unknown[];
	inFlight: boolean;
	dispose: () => void;
}

/** Values per Chunk; a real server batches a handful (OBSERVED.md §5.1). */
const MAX_BATCH = 64;
let fiberIds = 1000;

function cursorDefect(payload: Record<string, unknown>): string | undefined {
	const after = payload.afterSequence;
	if (after === undefined) return undefined;
	if (typeof after !== "number" || !Number.isInteger(after))
		return `Expected an integer, got ${JSON.stringify(after)}\n  at ["afterSequence"]`;
	if (after < 0)
		return `Expected a value greater than or equal to 0, got ${after}\n  at ["afterSequence"]`;
	return undefined;
}

/** The `refuseNextCommand` fault: a typed refusal, the command never runs. */
function refusedFault(
	ctx: SimContext,
	c: Record<string, unknown>,
): Outcome | undefined {
	const type = String(c.type);
	const left = ctx.faults.refuseCommands.get(type) ?? 0;
	if (left === 0) return undefined;
	ctx.faults.refuseCommands.set(type, left - 1);
	const message = `Command ${type} was refused (simulated fault).`;
	return {
		fail: {
			_tag: "OrchestrationV2DispatchCommandError",
			commandId: String(c.commandId),
			commandType: type,
			message,
			detail: message,
		},
	};
}

function methodsFor(ctx: SimContext): Record<string, Method> {
	const common: Record<string, Method> = {
		"server.getConfig": {
			scope: READ_SCOPE,
			call: () => ({ ok: serverConfig(ctx) }),
		},
		"server.probe": { scope: READ_SCOPE, call: () => ({ ok: {} }) },
		subscribeServerConfig: {
			scope: READ_SCOPE,
			stream: (_payload, push) => openConfigStream(ctx, push),
		},
	};
	if (ctx.protocol === 1) {
		// Enough V1 surface for a V2 client to notice it is on the wrong server (PROTOCOL.md §1.4).
		return {
			...common,
			"orchestration.subscribeShell": {
				scope: READ_SCOPE,
				stream: (_payload, push) => {
					push([{ kind: "snapshot", snapshot: v1Shell(ctx) }]);
					return () => {};
				},
			},
			"orchestration.dispatchCommand": {
				scope: OPERATE_SCOPE,
				call: () => ({
					die: 'Expected { readonly "type": "thread.turn.start", ... } | …',
				}),
			},
		};
	}
	// What the pre-release engine lacks answers as any unknown tag does (PROTOCOL.md §4.5).
	const newer: Record<string, Method> = {};
	if (simHas(ctx.compat, "searchThreads"))
		newer["orchestration.searchThreads"] = {
			scope: READ_SCOPE,
			call: (p) => searchThreads(ctx.store, p),
		};
	if (simHas(ctx.compat, "projectCreate"))
		newer["projects.mutate"] = {
			scope: OPERATE_SCOPE,
			call: (p) => ctx.projectMutations.mutate(p),
		};
	if (simHas(ctx.compat, "attachments"))
		newer["assets.persistChatAttachments"] = {
			scope: OPERATE_SCOPE,
			call: (p) => ctx.attachments.persist(p),
		};
	return {
		...common,
		...newer,
		"orchestration.dispatchCommand": {
			scope: OPERATE_SCOPE,
			call: (p) => refusedFault(ctx, p) ?? ctx.engine.dispatch(p),
		},
		"orchestration.launchThread": {
			scope: OPERATE_SCOPE,
			call: (p) => ctx.engine.launch(p),
		},
		"orchestration.getThreadProjection": {
			scope: READ_SCOPE,
			call: (p) =>
				typeof p.threadId === "string"
					? ctx.engine.getProjection(p.threadId)
					: { die: 'Missing key\n  at ["threadId"]' },
		},
		"orchestration.getArchivedShellSnapshot": {
			scope: READ_SCOPE,
			call: () => {
				const archived = [...ctx.store.threads.values()].filter(
					(t) => t.app.archivedAt && !t.app.deletedAt,
				);
				return {
					ok: {
						schemaVersion: 2,
						snapshotSequence: ctx.store.head(),
						projects: [...ctx.store.projects.values()].map((p) => p.row),
						threads: archived.map((t) => ctx.store.threadShell(t)),
					},
				};
			},
		},
		"orchestration.getTurnDiff": {
			scope: READ_SCOPE,
			call: (p) => turnDiff(ctx.store, p, false),
		},
		"orchestration.getFullThreadDiff": {
			scope: READ_SCOPE,
			call: (p) => turnDiff(ctx.store, p, true),
		},
		"orchestration.subscribeShell": {
			scope: READ_SCOPE,
			stream: (p, push) => {
				const defect = cursorDefect(p);
				if (defect) return { die: defect };
				return openShellStream(ctx, p, push);
			},
		},
		// Newer servers only: the pre-release dies on the unknown tag.
		...(simHas(ctx.compat, "getTurnItem")
			? {
					"orchestration.getTurnItem": {
						scope: READ_SCOPE,
						call: (p: Record<string, unknown>) => getTurnItem(ctx.store, p),
					},
				}
			: {}),
		"orchestration.subscribeThread": {
			scope: READ_SCOPE,
			stream: (p, push) => {
				if (typeof p.threadId !== "string")
					return { die: 'Missing key\n  at ["threadId"]' };
				const defect = cursorDefect(p);
				if (defect) return { die: defect };
				return openThreadStream(ctx, { ...p, threadId: p.threadId }, push);
			},
		},
	};
}

export function v1Shell(ctx: SimContext): Record<string, unknown> {
	return {
		snapshotSequence: ctx.store.head(),
		projects: [...ctx.store.projects.values()].map((p) => p.row),
		threads: [...ctx.store.threads.values()].map((t) => ({
			id: t.id,
			projectId: t.app.projectId,
			title: t.app.title,
			session: null,
			latestTurn: null,
			hasPendingApprovals: false,
			hasPendingUserInput: false,
		})),
	};
}

function exitFrame(requestId: string, outcome: Outcome): unknown {
	if ("ok" in outcome)
		return {
			_tag: "Exit",
			requestId,
			exit: { _tag: "Success", value: outcome.ok },
		};
	const cause =
		"fail" in outcome
			? { _tag: "Fail", error: outcome.fail }
			: { _tag: "Die", defect: outcome.die };
	return { _tag: "Exit", requestId, exit: { _tag: "Failure", cause: [cause] } };
}

const interruptFrame = (requestId: string) => ({
	_tag: "Exit",
	requestId,
	exit: {
		_tag: "Failure",
		cause: [{ _tag: "Interrupt", fiberId: fiberIds++ }],
	},
});

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
