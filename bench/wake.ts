/**
 * 1. Wake latency and 2. event latency, from the same runs. A "long task" run is held by the
 * sim; a t3_wait is parked on it; `finishRun` lets it end. Time zero is when the sim writes the
 * shell update carrying the terminal status to the socket (send tap, coalescing 0). End points:
 * t3_wait returning in the MCP client, and the webhook receiver having the POST (the outbox row
 * is committed with synchronous=FULL before delivery). Baselines: the same client polling
 * t3_thread every 250 ms; and a bare sqlite FULL commit + loopback POST from this process.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { config } from "./lib/config.ts";
import { call, connectMcp } from "./lib/mcp.ts";
import { startTimedReceiver } from "./lib/receiver.ts";
import { installSendTap, terminalClock } from "./lib/send-tap.ts";
import {
	allOnline,
	type BenchServer,
	metric,
	startBinary,
	until,
} from "./lib/server.ts";
import { startSims } from "./lib/sims.ts";
import { fmtSummary, type Summary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";

export const HOOK_SECRET = `whsec_${Buffer.from("bench-secret-0123456789abcdef012").toString("base64")}`;
const POLL_MS = 250;

type Ctx = {
	client: Client;
	server: BenchServer;
	finishRun: (threadId: string) => void;
	clock: ReturnType<typeof terminalClock>;
	receiver: ReturnType<typeof startTimedReceiver>;
};

async function holdRun(ctx: Ctx): Promise<string> {
	const d = await call<{ thread_id: string }>(ctx.client, "t3_dispatch", {
		machine: "m01",
		project: "demo",
		prompt: "long task",
	});
	return d.thread_id;
}

async function eventFor(ctx: Ctx, threadId: string): Promise<number> {
	let at: number | undefined;
	await until(
		() => {
			at = ctx.receiver.received.find(
				(r) =>
					r.body.thread_id === threadId && r.body.type === "thread.completed",
			)?.at;
			return at !== undefined;
		},
		10_000,
		`webhook for ${threadId}`,
		1,
	);
	return at as number;
}

async function wakeSample(ctx: Ctx) {
	const threadId = await holdRun(ctx);
	let returnedAt = 0;
	const waiting = call<{ outcome: string }>(ctx.client, "t3_wait", {
		thread_id: threadId,
		timeout: 30,
	}).then((r) => {
		returnedAt = performance.now();
		return r;
	});
	await until(
		async () =>
			(await metric(ctx.server.url, "t3code_mcp_waits_in_progress")) >= 1,
		5_000,
		"wait parked",
		2,
	);
	await Bun.sleep(20); // let the wait's first look settle; it then sleeps on shell changes only
	ctx.finishRun(threadId);
	const result = await waiting;
	if (result.outcome !== "completed")
		throw new Error(`t3_wait outcome ${result.outcome}`);
	const sentAt = ctx.clock.latestFor(threadId);
	if (sentAt === undefined) throw new Error("no terminal shell update seen");
	const hookAt = await eventFor(ctx, threadId);
	return { wake: returnedAt - sentAt, event: hookAt - sentAt };
}

async function pollSample(ctx: Ctx) {
	const threadId = await holdRun(ctx);
	await Bun.sleep(20);
	const poller = (async () => {
		for (let i = 0; i < 400; i++) {
			const next = performance.now() + POLL_MS;
			const t = await call<{ status: string }>(ctx.client, "t3_thread", {
				thread_id: threadId,
			});
			if (
				["completed", "failed", "interrupted", "cancelled"].includes(t.status)
			)
				return performance.now();
			await Bun.sleep(Math.max(0, next - performance.now()));
		}
		throw new Error("poll never saw the run end");
	})();
	// A random phase against the poll period, as a real finish would have.
	await Bun.sleep(POLL_MS + Math.random() * POLL_MS);
	ctx.finishRun(threadId);
	const seenAt = await poller;
	const sentAt = ctx.clock.latestFor(threadId);
	if (sentAt === undefined) throw new Error("no terminal shell update seen");
	await eventFor(ctx, threadId);
	return seenAt - sentAt;
}

/** The floor under event latency: one FULL-synchronous WAL commit, then a loopback POST. */
async function commitPostFloor(
	url: string,
	dir: string,
	n: number,
): Promise<Summary> {
	const db = new Database(join(dir, "floor.sqlite"));
	db.exec("PRAGMA journal_mode = WAL");
	db.exec("PRAGMA synchronous = FULL");
	db.exec("CREATE TABLE IF NOT EXISTS e (id TEXT PRIMARY KEY, body TEXT)");
	const insert = db.query("INSERT INTO e VALUES (?, ?)");
	const body = JSON.stringify({
		id: "floor",
		type: "floor",
		thread_id: "none",
		run_id: null,
		pad: "x".repeat(600),
	});
	const samples: number[] = [];
	for (let i = 0; i < n; i++) {
		const t0 = performance.now();
		db.transaction(() => insert.run(crypto.randomUUID(), body))();
		await fetch(url, {
			method: "POST",
			body,
			headers: { "content-type": "application/json" },
		});
		samples.push(performance.now() - t0);
	}
	db.close();
	return summarize(samples);
}

export async function benchWake(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	await installSendTap();
	const clock = terminalClock();
	const receiver = startTimedReceiver();
	const group = await startSims(1, { stepMs: 5, coalesceMs: 0 });
	const server = await startBinary({
		machines: group.refs,
		env: {
			T3CODE_MCP_HOOK_URL: receiver.url,
			T3CODE_MCP_HOOK_SECRET: HOOK_SECRET,
		},
	});
	const client = await connectMcp(server.mcpUrl);
	const sim = group.sims[0];
	if (!sim) throw new Error("no sim");
	const ctx: Ctx = {
		client,
		server,
		finishRun: (id) => sim.finishRun(id),
		clock,
		receiver,
	};
	try {
		await until(() => allOnline(server.url), 10_000, "machine online");
		for (let i = 0; i < 5; i++) await wakeSample(ctx); // warm-up
		const wake: number[] = [];
		const event: number[] = [];
		for (let i = 0; i < config.wakeSamples; i++) {
			const s = await wakeSample(ctx);
			wake.push(s.wake);
			event.push(s.event);
		}
		const poll: number[] = [];
		for (let i = 0; i < config.pollSamples; i++)
			poll.push(await pollSample(ctx));
		const floor = await commitPostFloor(
			receiver.url,
			server.dir,
			Math.max(50, config.wakeSamples),
		);
		const w = summarize(wake);
		const p = summarize(poll);
		const e = summarize(event);
		return {
			rows: [
				{
					figure: "1. wake latency (t3_wait)",
					value: fmtSummary(w),
					baseline: `poll t3_thread/250ms: ${fmtSummary(p)}`,
					ratio: `p50 ${ratio(w.p50, p.p50)}, p99 ${ratio(w.p99, p.p99)}`,
					target: "p50 ≤ 5 ms, p99 ≤ 20 ms",
					pass: w.p50 <= 5 && w.p99 <= 20,
				},
				{
					figure: "2. event latency (run end → POST)",
					value: fmtSummary(e),
					baseline: `FULL commit + POST: ${fmtSummary(floor)}`,
					ratio: `p50 ${ratio(e.p50, floor.p50)}, p99 ${ratio(e.p99, floor.p99)}`,
					target: "p99 ≤ 25 ms",
					pass: e.p99 <= 25,
				},
			],
			raw: {
				wake: w,
				pollBaseline: p,
				event: e,
				commitPostFloor: floor,
				samplesMs: { wake, poll, event },
			},
		};
	} finally {
		clock.stop();
		await client.close().catch(() => {});
		await server.stop();
		await group.stop();
		receiver.stop();
	}
}
