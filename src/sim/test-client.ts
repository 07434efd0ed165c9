/**
 * Test-only helper: a raw WebSocket client for the simulator's wire protocol, independent
 * of the product's protocol client, plus deadline-bounded waits (no fixed sleeps). Used by
 * the `*.test.ts` files beside it; not exported from index.ts.
 */
import { Cancelled, type Scheduler } from "./engine/scheduler.ts";
import { startSim } from "./sim.ts";
import type { Sim, SimOptions } from "./types.ts";

// biome-ignore lint/suspicious/noExplicitAny: wire frames are untyped JSON in tests
export type Frame = any;

export interface StreamHandle {
	id: string;
	items: Frame[];
	/** Resolves with the first item (already received or future) matching `pred`. */
	waitFor(pred: (item: Frame) => boolean, ms?: number): Promise<Frame>;
	exit(ms?: number): Promise<Frame>;
}

export interface RawClient {
	ws: WebSocket;
	received: Frame[];
	send(frame: unknown): void;
	call(tag: string, payload: unknown, ms?: number): Promise<Frame>;
	stream(
		tag: string,
		payload: unknown,
		options?: { autoAck?: boolean },
	): StreamHandle;
	waitFrame(pred: (frame: Frame) => boolean, ms?: number): Promise<Frame>;
	closed: Promise<{ code: number; reason: string }>;
	close(): void;
}

/** Matches the `run.updated` event that puts run `runId` in `status` on a thread stream. */
export const runEnded = (runId: string, status: string) => (i: Frame) =>
	i.kind === "event" &&
	i.event.type === "run.updated" &&
	i.event.payload.id === runId &&
	i.event.payload.status === status;

/** Resolve when `check` returns a truthy value; reject after `ms`. Checks every few ms. */
export async function until<T>(
	check: () => T | undefined | false | null,
	ms = 3000,
	what = "condition",
): Promise<T> {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = check();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 3));
	}
}

export async function mintTicket(sim: Sim, token = sim.token): Promise<string> {
	const res = await fetch(`${sim.url}/api/auth/websocket-ticket`, {
		method: "POST",
		headers: { authorization: `Bearer ${token}` },
	});
	if (res.status !== 200) throw new Error(`ticket mint failed: ${res.status}`);
	return ((await res.json()) as { ticket: string }).ticket;
}

export async function connect(
	sim: Sim,
	options: { token?: string; query?: string } = {},
): Promise<RawClient> {
	const query =
		options.query ??
		`wsTicket=${await mintTicket(sim, options.token)}&orchestrationProtocol=2`;
	const ws = new WebSocket(`${sim.url.replace("http", "ws")}/ws?${query}`);
	const received: Frame[] = [];
	const waiters = new Set<() => void>();
	const streams = new Map<string, { items: Frame[]; autoAck: boolean }>();
	let nextId = 1;
	const closed = new Promise<{ code: number; reason: string }>((resolve) => {
		ws.addEventListener("close", (e) =>
			resolve({ code: e.code, reason: e.reason }),
		);
	});
	ws.addEventListener("message", (e) => {
		const frame = JSON.parse(String(e.data));
		received.push(frame);
		if (frame._tag === "Chunk") {
			const stream = streams.get(frame.requestId);
			if (stream) {
				stream.items.push(...frame.values);
				if (stream.autoAck) send({ _tag: "Ack", requestId: frame.requestId });
			}
		}
		for (const waiter of [...waiters]) waiter();
	});
	await new Promise<void>((resolve, reject) => {
		ws.addEventListener("open", () => resolve(), { once: true });
		ws.addEventListener(
			"error",
			() => reject(new Error("websocket failed to open")),
			{ once: true },
		);
	});

	function send(frame: unknown): void {
		ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
	}

	function waitIn<T>(
		list: () => T[],
		pred: (x: T) => boolean,
		ms: number,
		what: string,
	): Promise<T> {
		return new Promise((resolve, reject) => {
			const check = () => {
				const hit = list().find(pred);
				if (hit === undefined) return;
				waiters.delete(check);
				clearTimeout(timer);
				resolve(hit);
			};
			const timer = setTimeout(() => {
				waiters.delete(check);
				reject(new Error(`timed out waiting for ${what}`));
			}, ms);
			waiters.add(check);
			check();
		});
	}

	const waitFrame = (pred: (frame: Frame) => boolean, ms = 3000) =>
		waitIn(() => received, pred, ms, "frame");

	return {
		ws,
		received,
		send,
		waitFrame,
		call(tag, payload, ms = 3000) {
			const id = String(nextId++);
			send({ _tag: "Request", id, tag, payload, headers: [] });
			return waitFrame((f) => f._tag === "Exit" && f.requestId === id, ms).then(
				(f) => f.exit,
			);
		},
		stream(tag, payload, options = {}) {
			const id = String(nextId++);
			const state = { items: [] as Frame[], autoAck: options.autoAck ?? true };
			streams.set(id, state);
			send({ _tag: "Request", id, tag, payload, headers: [] });
			return {
				id,
				items: state.items,
				waitFor: (pred, ms = 3000) =>
					waitIn(() => state.items, pred, ms, `${tag} item`),
				exit: (ms = 3000) =>
					waitFrame((f) => f._tag === "Exit" && f.requestId === id, ms).then(
						(f) => f.exit,
					),
			};
		},
		closed,
		close: () => ws.close(1000, "done"),
	};
}

export const modelSelection = { instanceId: "codex", model: "gpt-5.6-sol" };

export function launchPayload(
	projectId: string,
	text: string,
	extra: Record<string, unknown> = {},
) {
	return {
		commandId: crypto.randomUUID(),
		creationSource: "mcp",
		threadId: `thread-${crypto.randomUUID()}`,
		projectId,
		title: "sim test",
		modelSelection,
		runtimeMode: "full-access",
		interactionMode: "default",
		workspaceStrategy: { type: "root" },
		initialMessage: { messageId: crypto.randomUUID(), text, attachments: [] },
		...extra,
	};
}

export function dispatchPayload(
	threadId: string,
	text: string,
	extra: Record<string, unknown> = {},
) {
	return {
		type: "message.dispatch",
		commandId: crypto.randomUUID(),
		threadId,
		messageId: crypto.randomUUID(),
		text,
		attachments: [],
		createdBy: "user",
		creationSource: "mcp",
		dispatchMode: { type: "start_immediately" },
		...extra,
	};
}

/** A `dispatchCommand` of `type` on `threadId` with a fresh commandId. */
export function dispatchCommand(
	c: RawClient,
	type: string,
	threadId: string,
	extra: Record<string, unknown> = {},
): Promise<Frame> {
	return c.call("orchestration.dispatchCommand", {
		type,
		commandId: crypto.randomUUID(),
		threadId,
		...extra,
	});
}

/** Headers of an authorized protocol-2 HTTP request to the sim. */
export function httpHeaders(sim: Sim): Record<string, string> {
	return {
		authorization: `Bearer ${sim.token}`,
		"x-t3-orchestration-protocol": "2",
	};
}

/** The first project's id, read from the HTTP shell. */
export async function firstProjectId(sim: Sim): Promise<string> {
	const res = await fetch(`${sim.url}/api/orchestration/shell`, {
		headers: httpHeaders(sim),
	});
	const body = (await res.json()) as { projects: { id: string }[] };
	return body.projects[0]?.id as string;
}

/** A sim started with `options`, its first project's id, and a raw client connected to it. */
export async function startSimWithClient(
	options: SimOptions,
): Promise<{ sim: Sim; projectId: string; client: RawClient }> {
	const sim = await startSim(options);
	const projectId = await firstProjectId(sim);
	const client = await connect(sim);
	return { sim, projectId, client };
}

/**
 * A scheduler for `startSim({ scheduler })` whose time moves only when the test says so: agent
 * steps, the `waiting` phase and shell coalescing windows all fire from `advance`, in order.
 */
export function manualScheduler(): Scheduler & {
	advance(ms: number): Promise<void>;
	now(): number;
} {
	let now = 0;
	let nextId = 1;
	const timers = new Map<number, { at: number; fn: () => void }>();
	const add = (ms: number, fn: () => void) => {
		const id = nextId++;
		timers.set(id, { at: now + Math.max(0, ms), fn });
		return id;
	};
	const settle = () => new Promise((resolve) => setImmediate(resolve));
	return {
		now: () => now,
		later(ms, fn) {
			const id = add(ms, fn);
			return () => timers.delete(id);
		},
		sleep(ms, signal) {
			return new Promise((resolve, reject) => {
				if (signal?.aborted) return reject(new Cancelled());
				const id = add(ms, () => {
					signal?.removeEventListener("abort", onAbort);
					resolve();
				});
				function onAbort() {
					timers.delete(id);
					reject(new Cancelled());
				}
				signal?.addEventListener("abort", onAbort, { once: true });
			});
		},
		cancelAll: () => timers.clear(),
		async advance(ms) {
			const target = now + ms;
			await settle();
			for (;;) {
				let due: [number, { at: number; fn: () => void }] | undefined;
				for (const entry of timers)
					if (entry[1].at <= target && (!due || entry[1].at < due[1].at))
						due = entry;
				if (!due) break;
				timers.delete(due[0]);
				now = due[1].at;
				due[1].fn();
				await settle();
			}
			now = target;
		},
	};
}
