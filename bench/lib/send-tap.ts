/**
 * Timestamps what the in-process simulators put on the wire. Sim frames carry no time
 * (`SimFrame` has no `at`), so this wraps Bun's `ServerWebSocket.prototype.send`, which every
 * sim socket uses (src/sim/rpc-server.ts `send`), and stamps each frame with performance.now()
 * right before it is written. Only Bun.serve *server* sockets pass here: the product's own
 * sockets are clients, so nothing of the connector is measured by this hook.
 */

type Listener = (text: string, at: number) => void;
const listeners = new Set<Listener>();
let installed: Promise<void> | undefined;

/** Patches the prototype once per process (it is shared by every Bun.serve websocket). */
export function installSendTap(): Promise<void> {
	installed ??= new Promise<void>((resolve, reject) => {
		const server = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch: (request, srv) =>
				srv.upgrade(request) ? undefined : new Response("no", { status: 400 }),
			websocket: {
				open(ws) {
					const proto = Object.getPrototypeOf(ws) as {
						send: (...args: unknown[]) => number;
					};
					const original = proto.send;
					proto.send = function tappedSend(this: unknown, ...args: unknown[]) {
						if (listeners.size > 0 && typeof args[0] === "string") {
							const at = performance.now();
							for (const listener of listeners) listener(args[0], at);
						}
						return original.apply(this, args);
					};
					ws.close();
				},
				message() {},
				close() {
					server.stop(true);
					resolve();
				},
			},
		});
		const client = new WebSocket(`ws://127.0.0.1:${server.port}`);
		client.onerror = () => reject(new Error("send tap: probe socket failed"));
	});
	return installed;
}

export function onSimSend(listener: Listener): () => void {
	listeners.add(listener);
	return () => listeners.delete(listener);
}

const TERMINAL = new Set(["completed", "interrupted", "failed", "cancelled"]);

export interface ShellUpdate {
	threadId: string;
	runId: string | null;
	status: string;
}

/** The `thread.updated` shell items inside one sent frame (a Chunk of a shell subscription). */
export function shellUpdates(text: string): ShellUpdate[] {
	if (!text.includes('"thread.updated"')) return [];
	const frame = JSON.parse(text) as { _tag?: string; values?: unknown[] };
	if (frame._tag !== "Chunk" || !Array.isArray(frame.values)) return [];
	const out: ShellUpdate[] = [];
	for (const value of frame.values as {
		kind?: string;
		thread?: Record<string, unknown>;
	}[]) {
		if (value?.kind !== "thread.updated" || !value.thread) continue;
		out.push({
			threadId: String(value.thread.id),
			runId: (value.thread.latestRunId as string | null) ?? null,
			status: String(value.thread.status),
		});
	}
	return out;
}

/**
 * Records when each run was first sent with a terminal status, keyed `threadId/runId`, and
 * counts shell updates sent. This is "the moment the simulator sends the terminal update".
 */
export function terminalClock() {
	const terminalAt = new Map<string, number>();
	const byThread = new Map<string, { count: number; lastAt: number }>();
	const counts = { updates: 0, terminal: 0 };
	const off = onSimSend((text, at) => {
		for (const u of shellUpdates(text)) {
			counts.updates++;
			if (!TERMINAL.has(u.status)) continue;
			const key = `${u.threadId}/${u.runId}`;
			if (terminalAt.has(key)) continue;
			terminalAt.set(key, at);
			counts.terminal++;
			const t = byThread.get(u.threadId) ?? { count: 0, lastAt: 0 };
			byThread.set(u.threadId, { count: t.count + 1, lastAt: at });
		}
	});
	return {
		counts,
		at: (threadId: string, runId: string | null) =>
			terminalAt.get(`${threadId}/${runId}`),
		/** When the thread's latest run was first sent terminal (when its run id is unknown). */
		latestFor: (threadId: string) => byThread.get(threadId)?.lastAt,
		/** How many of the thread's runs have been sent terminal. */
		countFor: (threadId: string) => byThread.get(threadId)?.count ?? 0,
		stop: off,
	};
}
