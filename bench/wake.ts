/**
 * 1. Wake latency and 2. event latency, from the same runs, on a simulator with a real server's
 * defaults (shell coalesced in ≤ 50 ms windows, thread stream not, `waiting` before
 * `completed`). A "long task" run is held by the sim; a t3_wait is parked on it; `finishRun`
 * lets it end. Time zero ("the floor") is when the sim first sent a frame showing the run's
 * outcome on any stream (`sim.runOutcome`); the old zero, the run's completion, is reported too.
 * End points: t3_wait returning in the MCP client; the webhook receiver having the POST (the
 * outbox row is committed with synchronous=FULL before delivery). Baselines in the same runs: a
 * plain shell-only client (shell shows terminal → GET the projection), and a bare FULL commit +
 * loopback POST from this process.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { Sim } from "../src/sim/index.ts";
import { wallMs } from "../src/sim/runs/outcome-times.ts";
import { config } from "./lib/config.ts";
import { call, connectMcp } from "./lib/mcp.ts";
import { startTimedReceiver } from "./lib/receiver.ts";
import {
	allOnline,
	type BenchServer,
	metric,
	startBinary,
	until,
} from "./lib/server.ts";
import { connectShellOnly, type ShellOnlyClient } from "./lib/shell-client.ts";
import { startSims } from "./lib/sims.ts";
import { fmtSummary, type Summary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";
import { walRestarts } from "./lib/wal.ts";

export const HOOK_SECRET = `whsec_${Buffer.from("bench-secret-0123456789abcdef012").toString("base64")}`;

/** Warm-up samples: at least this many, and more until the WAL has restarted (at most MAX). */
const WARM_UP_MIN = 20;
const WARM_UP_MAX = 400;

type Ctx = {
	client: Client;
	server: BenchServer;
	sim: Sim;
	shellOnly: ShellOnlyClient;
	receiver: ReturnType<typeof startTimedReceiver>;
};

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

async function sample(ctx: Ctx) {
	const d = await call<{ thread_id: string; run_id: string }>(
		ctx.client,
		"t3_dispatch",
		{ machine: "m01", project: "demo", prompt: "long task" },
	);
	const threadId = d.thread_id;
	const baseline = ctx.shellOnly.outcome(threadId, d.run_id);
	let returnedAt = 0;
	const waiting = call<{ outcome: string }>(ctx.client, "t3_wait", {
		thread_id: threadId,
		timeout: 30,
	}).then((r) => {
		returnedAt = wallMs();
		return r;
	});
	await until(
		async () =>
			(await metric(ctx.server.url, "t3code_mcp_waits_in_progress")) >= 1,
		5_000,
		"wait parked",
		2,
	);
	await Bun.sleep(20); // the run is going and followed; nothing else is in flight
	ctx.sim.finishRun(threadId);
	const result = await waiting;
	if (result.outcome !== "completed")
		throw new Error(`t3_wait outcome ${result.outcome}`);
	const hookAt = await eventFor(ctx, threadId);
	const shellOnlyAt = await baseline;
	const times = ctx.sim.runOutcome(d.run_id);
	if (times?.sentAt === undefined)
		throw new Error(`the sim never sent the outcome of ${d.run_id}`);
	return {
		via: times.via,
		wake: returnedAt - times.sentAt,
		event: hookAt - times.sentAt,
		shellOnly: shellOnlyAt - times.sentAt,
		wakeFromEnd: returnedAt - times.endedAt,
		eventFromEnd: hookAt - times.endedAt,
		shellOnlyFromEnd: shellOnlyAt - times.endedAt,
	};
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

const pair = (s: Summary) => `${s.p50.toFixed(1)} / ${s.p99.toFixed(1)} ms`;

export async function benchWake(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const receiver = startTimedReceiver();
	// A real server's defaults: shell coalesced in 50 ms windows, thread stream at once.
	const group = await startSims(1, { stepMs: 5 });
	const server = await startBinary({
		machines: group.refs,
		env: {
			T3CODE_MCP_HOOK_URL: receiver.url,
			T3CODE_MCP_HOOK_SECRET: HOOK_SECRET,
		},
	});
	const client = await connectMcp(server.mcpUrl);
	const sim = group.sims[0];
	const ref = group.refs[0];
	if (!sim || !ref) throw new Error("no sim");
	const shellOnly = await connectShellOnly(ref);
	const ctx: Ctx = { client, server, sim, shellOnly, receiver };
	try {
		await until(() => allOnline(server.url), 10_000, "machine online");
		// Warm as a long-running server is: its code compiled by the JIT and its WAL no longer
		// growing (restarted after a checkpoint at least once; until then each sync also writes
		// the file's size, and on a fresh disk the first third of the samples ran 2-3× slower).
		let warmUp = 0;
		const statePath = join(server.dir, "state.sqlite");
		const restartsAtStart = walRestarts(statePath);
		while (
			warmUp < WARM_UP_MIN ||
			(walRestarts(statePath) <= restartsAtStart && warmUp < WARM_UP_MAX)
		) {
			await sample(ctx);
			warmUp++;
		}
		const walRestartsAtStart = walRestarts(statePath);
		const s: Record<string, number[]> = {
			wake: [],
			event: [],
			shellOnly: [],
			wakeFromEnd: [],
			eventFromEnd: [],
			shellOnlyFromEnd: [],
		};
		let viaThread = 0;
		for (let i = 0; i < config.wakeSamples; i++) {
			const one = await sample(ctx);
			if (one.via === "thread") viaThread++;
			for (const key of Object.keys(s))
				s[key]?.push(one[key as keyof typeof one] as number);
		}
		const floor = await commitPostFloor(
			receiver.url,
			server.dir,
			Math.max(50, config.wakeSamples),
		);
		const sum = Object.fromEntries(
			Object.entries(s).map(([k, v]) => [k, summarize(v)]),
		) as Record<string, Summary>;
		const wake = sum.wake as Summary;
		const event = sum.event as Summary;
		const base = sum.shellOnly as Summary;
		const wakeFromEnd = sum.wakeFromEnd as Summary;
		const shellFromEnd = sum.shellOnlyFromEnd as Summary;
		return {
			rows: [
				{
					figure: "1. wake: first outcome frame → t3_wait returns",
					value: fmtSummary(wake),
					baseline: `shell-only client (shell → GET): ${pair(base)}`,
					ratio: `p50 ${ratio(wake.p50, base.p50)}, p99 ${ratio(wake.p99, base.p99)}`,
					target: "p50 ≤ 3 ms, p99 ≤ 10 ms",
					pass: wake.p50 <= 3 && wake.p99 <= 10,
				},
				{
					figure: "1. wake from run completion (old zero)",
					value: fmtSummary(wakeFromEnd),
					baseline: `shell-only client: ${pair(shellFromEnd)}`,
					ratio: `p50 ${ratio(wakeFromEnd.p50, shellFromEnd.p50)}`,
					target: "reported",
					pass: null,
				},
				{
					figure: "2. event: first outcome frame → webhook has the POST",
					value: fmtSummary(event),
					baseline: `FULL commit + POST: ${pair(floor)}`,
					ratio: `p50 ${ratio(event.p50, floor.p50)}, p99 ${ratio(event.p99, floor.p99)}`,
					target: "p50 ≤ 5 ms, p99 ≤ 15 ms",
					pass: event.p50 <= 5 && event.p99 <= 15,
				},
				{
					figure: "2. event from run completion (old zero)",
					value: fmtSummary(sum.eventFromEnd as Summary),
					baseline: "-",
					ratio: "-",
					target: "reported",
					pass: null,
				},
			],
			raw: {
				...sum,
				commitPostFloor: floor,
				warmUpSamples: warmUp,
				walRestartsInWarmUp: walRestartsAtStart - restartsAtStart,
				firstFrameOnThreadStream: viaThread,
				samples: config.wakeSamples,
				samplesMs: s,
			},
		};
	} finally {
		shellOnly.close();
		await client.close().catch(() => {});
		await server.stop();
		await group.stop();
		receiver.stop();
	}
}
