/**
 * The baseline of the wake figures: a plain shell-only client, as PROTOCOL.md §8.4 describes
 * and as the connector worked before it followed threads. It holds `subscribeShell`, and when a
 * watched thread's shell shows a terminal status it GETs the projection to learn the outcome.
 * Not the product's client; just enough protocol for the measurement.
 */
import { wallMs } from "../../src/sim/runs/outcome-times.ts";
import type { SimRef } from "./rpc.ts";

const TERMINAL = new Set([
	"completed",
	"interrupted",
	"failed",
	"cancelled",
	"rolled_back",
]);

export interface ShellOnlyClient {
	/** Resolves with the wall time the client knew `runId`'s outcome (shell, then GET). */
	outcome(threadId: string, runId: string): Promise<number>;
	close(): void;
}

export async function connectShellOnly(sim: SimRef): Promise<ShellOnlyClient> {
	const headers = {
		authorization: `Bearer ${sim.token}`,
		"x-t3-orchestration-protocol": "2",
	};
	const ws = new WebSocket(
		`${sim.url.replace("http", "ws")}/ws?orchestrationProtocol=2`,
		{ headers: { Authorization: `Bearer ${sim.token}` } },
	);
	const watchers = new Map<
		string,
		{ runId: string; resolve: (at: number) => void; busy: boolean }
	>();
	const read = async (threadId: string) => {
		const w = watchers.get(threadId);
		if (!w || w.busy) return;
		w.busy = true;
		const response = await fetch(
			`${sim.url}/api/orchestration/threads/${threadId}`,
			{ headers },
		);
		const body = (await response.json()) as {
			projection: { runs: { id: string; status: string }[] };
		};
		w.busy = false;
		const run = body.projection.runs.find((r) => r.id === w.runId);
		if (run && TERMINAL.has(run.status)) {
			watchers.delete(threadId);
			w.resolve(wallMs());
		}
	};
	ws.addEventListener("message", (event) => {
		const frame = JSON.parse(String(event.data)) as {
			_tag: string;
			requestId?: string;
			values?: { kind?: string; thread?: { id: string; status: string } }[];
		};
		if (frame._tag !== "Chunk") return;
		ws.send(JSON.stringify({ _tag: "Ack", requestId: frame.requestId }));
		for (const value of frame.values ?? []) {
			const thread = value.thread;
			if (value.kind !== "thread.updated" || !thread) continue;
			if (watchers.has(thread.id) && TERMINAL.has(thread.status))
				void read(thread.id);
		}
	});
	await new Promise<void>((resolve, reject) => {
		ws.addEventListener("open", () => resolve(), { once: true });
		ws.addEventListener(
			"error",
			() => reject(new Error(`shell client: cannot open ${sim.url}`)),
			{ once: true },
		);
	});
	ws.send(
		JSON.stringify({
			_tag: "Request",
			id: "1",
			tag: "orchestration.subscribeShell",
			payload: {},
			headers: [],
		}),
	);
	return {
		outcome: (threadId, runId) =>
			new Promise((resolve) => {
				watchers.set(threadId, { runId, resolve, busy: false });
			}),
		close: () => ws.close(1000, "done"),
	};
}
