/**
 * The console (issue 45). 1. First byte of `/console` with 50 machines / 10 000 threads and 500
 * machines (`BENCH_MACHINES` at scale) / 100 000 threads (`BENCH_THREADS`): in process, the real
 * services and HTTP app over machines whose shells are in memory (as they are in the connector
 * once synchronized), served by Bun.serve on loopback; one thread in 20 running, one in 200
 * waiting on a question, one in 500 failed. Baseline: `/healthz` on the same server (what any
 * page of it costs). 2. A run's outcome → the console's SSE message: the compiled binary and a
 * simulator, a "long task" finished by the sim, from the first frame showing the outcome
 * (`sim.runOutcome`, as the wake bench) to the `row` message read from `/console/events`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppConfig } from "../src/config/types.ts";
import { createApp } from "../src/http/app.ts";
import { createServices } from "../src/services.ts";
import { wallMs } from "../src/sim/runs/outcome-times.ts";
import type { Machine } from "../src/t3/machine-api.ts";
import type { ThreadShell } from "../src/t3/model.ts";
import { silentLogger } from "../src/util/log.ts";
import { testServerSettings } from "../test/helpers/stack.ts";
import { config } from "./lib/config.ts";
import { call, connectMcp } from "./lib/mcp.ts";
import { memoryMachine, memoryMachineConfigs } from "./lib/memory-machine.ts";
import { startBinary, until } from "./lib/server.ts";
import { startSims } from "./lib/sims.ts";
import { fmtSummary, type Summary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";

const FIRST_BYTE_P50_MS = 50;
const SSE_P50_MS = 10;
const SSE_P99_MS = 50;

const iso = (ms: number) => new Date(ms).toISOString();

function fakeMachine(name: string, index: number, threads: number): Machine {
	const start = Date.parse("2026-01-01T00:00:00.000Z");
	return memoryMachine(name, index, threads, (id, t, project) => {
		const n = index * threads + t;
		const running = n % 20 === 0;
		const asking = n % 200 === 7;
		const failed = n % 500 === 11;
		return {
			id,
			projectId: project.id,
			title: `thread ${n}`,
			latestRunId: `${id}-r`,
			activeRunId: running || asking ? `${id}-r` : null,
			status: running || asking ? "running" : failed ? "failed" : "completed",
			pendingRuntimeRequest: asking
				? { id: `${id}-q`, kind: "user-input", createdAt: iso(start + n) }
				: null,
			latestVisibleMessage: null,
			updatedAt: iso(start + n * 1000),
		} as ThreadShell;
	});
}

/** Milliseconds until the response's headers (its first byte), then the body read whole. */
async function firstByte(url: string, cookie: string): Promise<number> {
	const t0 = performance.now();
	const response = await fetch(url, { headers: { cookie } });
	const ms = performance.now() - t0;
	await response.arrayBuffer();
	if (response.status !== 200)
		throw new Error(`${url} answered ${response.status}`);
	return ms;
}

async function firstByteAt(
	machines: number,
	threads: number,
): Promise<{ page: Summary; healthz: Summary; bytes: number }> {
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-bench-console-"));
	const perMachine = Math.floor(threads / machines);
	const configs = memoryMachineConfigs(machines);
	const appConfig: AppConfig = {
		file: join(dir, "t3code.toml"),
		server: testServerSettings(join(dir, "state.sqlite")),
		machines: configs,
		clients: [],
	};
	const services = createServices(appConfig, {
		version: "bench",
		log: silentLogger,
		taskShaper: () => ({ content: [] }),
		machineFactory: (c) =>
			fakeMachine(
				c.name,
				configs.findIndex((m) => m.name === c.name),
				perMachine,
			),
	});
	const app = createApp(services);
	const server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch: (request, s) => app.fetch(request, s),
	});
	try {
		const base = `http://127.0.0.1:${server.port}`;
		// Open on loopback: the first visit makes the session.
		const first = await fetch(`${base}/console`);
		const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
		const bytes = (await first.arrayBuffer()).byteLength;
		const n = config.quick ? 20 : 100;
		for (let i = 0; i < 10; i++) await firstByte(`${base}/console`, cookie);
		const page: number[] = [];
		const healthz: number[] = [];
		for (let i = 0; i < n; i++) {
			page.push(await firstByte(`${base}/console`, cookie));
			healthz.push(await firstByte(`${base}/healthz`, cookie));
		}
		return { page: summarize(page), healthz: summarize(healthz), bytes };
	} finally {
		server.stop(true);
		await services.stop();
		rmSync(dir, { recursive: true, force: true });
	}
}

/** The SSE stream's `row` messages as they arrive, with their arrival time. */
function readEvents(body: ReadableStream<Uint8Array>) {
	const rows: { id: string; section: string; at: number }[] = [];
	const decoder = new TextDecoder();
	let buffer = "";
	void (async () => {
		for await (const chunk of body) {
			const at = wallMs();
			buffer += decoder.decode(chunk, { stream: true });
			let end = buffer.indexOf("\n\n");
			while (end >= 0) {
				const message = buffer.slice(0, end);
				buffer = buffer.slice(end + 2);
				if (message.startsWith("event: row\n")) {
					const data = JSON.parse(message.slice(message.indexOf("data: ") + 6));
					rows.push({ id: data.id, section: data.section, at });
				}
				end = buffer.indexOf("\n\n");
			}
		}
	})().catch(() => {});
	return rows;
}

async function sseLatency(): Promise<{ sse: Summary; viaThread: number }> {
	const group = await startSims(1, { stepMs: 5 });
	const server = await startBinary({ machines: group.refs });
	const sim = group.sims[0];
	if (!sim) throw new Error("no sim");
	const client = await connectMcp(server.mcpUrl);
	const abort = new AbortController();
	try {
		const first = await fetch(`${server.url}/console`);
		const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
		await first.arrayBuffer();
		const stream = await fetch(`${server.url}/console/events`, {
			headers: { cookie },
			signal: abort.signal,
		});
		if (!stream.body) throw new Error("no SSE body");
		const rows = readEvents(stream.body);
		const sample = async () => {
			const d = await call<{ thread_id: string; run_id: string }>(
				client,
				"t3_dispatch",
				{ machine: "m01", project: "demo", prompt: "long task" },
			);
			await until(
				() => rows.some((r) => r.id === d.thread_id && r.section === "active"),
				10_000,
				"the run going on the console",
				1,
			);
			await Bun.sleep(20);
			sim.finishRun(d.thread_id);
			let at: number | undefined;
			await until(
				() => {
					at = rows.find(
						(r) => r.id === d.thread_id && r.section === "settled",
					)?.at;
					return at !== undefined;
				},
				10_000,
				"the settled row on the console",
				1,
			);
			const times = sim.runOutcome(d.run_id);
			if (times?.sentAt === undefined)
				throw new Error(`the sim never sent the outcome of ${d.run_id}`);
			return { ms: (at as number) - times.sentAt, via: times.via };
		};
		for (let i = 0; i < 10; i++) await sample();
		const samples: number[] = [];
		let viaThread = 0;
		const n = config.quick ? 20 : 100;
		for (let i = 0; i < n; i++) {
			const one = await sample();
			samples.push(one.ms);
			if (one.via === "thread") viaThread++;
		}
		return { sse: summarize(samples), viaThread };
	} finally {
		abort.abort();
		await client.close();
		await server.stop();
		await group.stop();
	}
}

export async function benchConsole(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const small = await firstByteAt(config.scaleMachines, config.scaleThreads);
	const large = await firstByteAt(
		config.scaleTopMachines,
		config.scaleTopThreads,
	);
	const live = await sseLatency();
	const pageRow = (
		label: string,
		r: { page: Summary; healthz: Summary; bytes: number },
	): Row => ({
		figure: `/console first byte, ${label}`,
		value: fmtSummary(r.page),
		baseline: `/healthz on it: ${fmtSummary(r.healthz)}`,
		ratio: `p50 ${ratio(r.page.p50, r.healthz.p50)}`,
		target: `p50 ≤ ${FIRST_BYTE_P50_MS} ms`,
		pass: r.page.p50 <= FIRST_BYTE_P50_MS,
	});
	return {
		rows: [
			pageRow(
				`${config.scaleMachines} machines / ${config.scaleThreads} threads`,
				small,
			),
			pageRow(
				`${config.scaleTopMachines} machines / ${config.scaleTopThreads} threads`,
				large,
			),
			{
				figure: "run outcome frame → console SSE message",
				value: fmtSummary(live.sse),
				baseline: "-",
				ratio: "-",
				target: `p50 ≤ ${SSE_P50_MS} ms, p99 ≤ ${SSE_P99_MS} ms`,
				pass: live.sse.p50 <= SSE_P50_MS && live.sse.p99 <= SSE_P99_MS,
			},
		],
		raw: {
			small,
			large,
			sse: live.sse,
			sseViaThread: live.viaThread,
		},
	};
}
