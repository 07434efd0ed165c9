/**
 * MCP Tasks, measured as the wake row is (wake.ts): a "long task" run held by the sim, a
 * `t3_wait` answered with a task (2026-07-28, the extension declared) parked on it, `finishRun`
 * lets it end; time zero is when the sim first sent a frame showing the run's outcome. End
 * points, in separate rounds so one does not load the other: (1) the first `tasks/get` reply
 * showing the task completed, polled back to back (the reply's arrival, so an upper bound on
 * when the completion became visible); (2) the `notifications/tasks` saying completed on a
 * `subscriptions/listen` stream naming the task.
 */
import type { Sim } from "../src/sim/index.ts";
import { wallMs } from "../src/sim/runs/outcome-times.ts";
import { MODERN, rawRequest, TASKS } from "../test/helpers/tasks-client.ts";
import { config } from "./lib/config.ts";
import {
	allOnline,
	type BenchServer,
	startBinary,
	until,
} from "./lib/server.ts";
import { startSims } from "./lib/sims.ts";
import { fmtSummary, type Summary, summarize } from "./lib/stats.ts";
import type { Row } from "./lib/table.ts";

type Ctx = { server: BenchServer; sim: Sim };

async function call(
	ctx: Ctx,
	name: string,
	args: Record<string, unknown>,
	tasks = false,
) {
	const reply = await rawRequest(
		ctx.server.mcpUrl,
		"tools/call",
		{ name, arguments: args },
		{ tasks },
	);
	if (reply.kind !== "result")
		throw new Error(`${name}: ${reply.error.message}`);
	return reply.result;
}

/** A held run and a task waiting on it. */
async function parked(ctx: Ctx) {
	const d = (await call(ctx, "t3_dispatch", {
		machine: "m01",
		project: "demo",
		prompt: "long task",
	})) as { structuredContent: { thread_id: string; run_id: string } };
	const { thread_id: threadId, run_id: runId } = d.structuredContent;
	const handle = await call(ctx, "t3_wait", { thread_id: threadId }, true);
	if (handle.resultType !== "task")
		throw new Error(`t3_wait answered ${handle.resultType}, not a task`);
	return { threadId, runId, taskId: handle.taskId as string };
}

function outcomeAt(sim: Sim, runId: string): number {
	const times = sim.runOutcome(runId);
	if (times?.sentAt === undefined)
		throw new Error(`the sim never sent the outcome of ${runId}`);
	return times.sentAt;
}

async function samplePoll(ctx: Ctx): Promise<number> {
	const { threadId, runId, taskId } = await parked(ctx);
	await Bun.sleep(20); // the run is going and followed; nothing else is in flight
	ctx.sim.finishRun(threadId);
	let completedAt = 0;
	for (;;) {
		const reply = await rawRequest(ctx.server.mcpUrl, "tasks/get", { taskId });
		const at = wallMs();
		if (reply.kind !== "result") throw new Error(reply.error.message);
		if (reply.result.status === "completed") {
			completedAt = at;
			break;
		}
	}
	return completedAt - outcomeAt(ctx.sim, runId);
}

async function sampleNotify(ctx: Ctx): Promise<number> {
	const { threadId, runId, taskId } = await parked(ctx);
	const controller = new AbortController();
	const response = await fetch(ctx.server.mcpUrl, {
		method: "POST",
		signal: controller.signal,
		headers: {
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			"mcp-protocol-version": MODERN,
			"mcp-method": "subscriptions/listen",
		},
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: `listen-${taskId}`,
			method: "subscriptions/listen",
			params: {
				notifications: { taskIds: [taskId] },
				_meta: {
					"io.modelcontextprotocol/protocolVersion": MODERN,
					"io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
					"io.modelcontextprotocol/clientCapabilities": {
						extensions: { [TASKS]: {} },
					},
				},
			},
		}),
	});
	const reader = (response.body as ReadableStream<Uint8Array>).getReader();
	const decoder = new TextDecoder();
	let buffer = "";
	let finished = false;
	try {
		for (;;) {
			const { value, done } = await reader.read();
			if (done) throw new Error("listen stream ended");
			const at = wallMs();
			buffer += decoder.decode(value, { stream: true });
			let end = buffer.indexOf("\n\n");
			while (end >= 0) {
				const data = buffer
					.slice(0, end)
					.split("\n")
					.find((l) => l.startsWith("data:"));
				buffer = buffer.slice(end + 2);
				end = buffer.indexOf("\n\n");
				if (!data) continue;
				const message = JSON.parse(data.slice(5)) as {
					method?: string;
					params?: { status?: string };
				};
				if (message.method !== "notifications/tasks") continue;
				if (message.params?.status === "working" && !finished) {
					// Subscribed and told the current state: now let the run end.
					finished = true;
					await Bun.sleep(20);
					ctx.sim.finishRun(threadId);
				} else if (message.params?.status === "completed")
					return at - outcomeAt(ctx.sim, runId);
			}
		}
	} finally {
		controller.abort();
	}
}

export async function benchTasks(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	// A real server's defaults, as the wake row: shell coalesced in 50 ms windows.
	const group = await startSims(1, { stepMs: 5 });
	const server = await startBinary({ machines: group.refs });
	const sim = group.sims[0];
	if (!sim) throw new Error("no sim");
	const ctx: Ctx = { server, sim };
	try {
		await until(() => allOnline(server.url), 10_000, "machine online");
		const n = config.wakeSamples;
		for (let i = 0; i < Math.min(20, n); i++) {
			await samplePoll(ctx);
			await sampleNotify(ctx);
		}
		const poll: number[] = [];
		const notify: number[] = [];
		for (let i = 0; i < n; i++) poll.push(await samplePoll(ctx));
		for (let i = 0; i < n; i++) notify.push(await sampleNotify(ctx));
		const p = summarize(poll);
		const q = summarize(notify);
		const ok = (s: Summary) => s.p50 <= 5;
		return {
			rows: [
				{
					figure: "1. task: first outcome frame → tasks/get says completed",
					value: fmtSummary(p),
					baseline: "wake row (t3_wait returns)",
					ratio: "-",
					target: "p50 ≤ 5 ms",
					pass: ok(p),
				},
				{
					figure:
						"1. task: first outcome frame → notifications/tasks completed",
					value: fmtSummary(q),
					baseline: "wake row (t3_wait returns)",
					ratio: "-",
					target: "p50 ≤ 5 ms",
					pass: ok(q),
				},
			],
			raw: { poll: p, notify: q, samples: n, samplesMs: { poll, notify } },
		};
	} finally {
		await server.stop();
		await group.stop();
	}
}
