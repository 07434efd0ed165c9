/**
 * The fault-drill harness: simulated T3 machines, the real server in-process (with fast
 * heartbeat and backoff, through the `machineFactory` service option), a loopback webhook
 * receiver, and the official MCP client. Subprocess drills (kill -9) use test/helpers/process.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	Client,
	StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { type RunningServer, startServer } from "../../src/cli/serve.ts";
import type { AppConfig, MachineConfig } from "../../src/config/types.ts";
import { type Sim, type SimOptions, startSim } from "../../src/sim/index.ts";
import { createMachine } from "../../src/t3/connect/machine.ts";
import type { Clock } from "../../src/util/clock.ts";
import { createLogger, type Logger } from "../../src/util/log.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../../test/helpers/receiver.ts";
import { machineConfig, testServerSettings } from "../../test/helpers/stack.ts";

/** Heartbeat and reconnect timings that make the drills take seconds instead of minutes. */
export const FAST_MACHINE = {
	pingIntervalMs: 50,
	pongTimeoutMs: 300,
	syncTimeoutMs: 2_000,
	backoff: { initialMs: 50, maxMs: 400, resetAfterMs: 2_000 },
	commandRetryMs: 5_000,
	requestTimeoutMs: 3_000,
};

export interface DrillStackOptions {
	machines?: string[];
	sim?: SimOptions;
	clock?: Clock;
	retryScheduleS?: number[];
	/** Where the state file goes (default: a fresh temp dir). */
	statePath?: string;
	/** Use the production heartbeat/backoff instead of FAST_MACHINE. */
	productionTimings?: boolean;
}

export interface LogLine {
	level: string;
	msg: string;
	[key: string]: unknown;
}

export interface DrillStack {
	server: RunningServer;
	sims: Map<string, Sim>;
	receiver: Receiver;
	client: Client;
	statePath: string;
	dir: string;
	/** Every log line of the server (level debug and up). */
	logs: LogLine[];
	/** The first (or the named) simulator. */
	sim(name?: string): Sim;
	/** The connector's record of a thread and its outbox rows, for a lost-event note. */
	explain(threadId: string): string;
	stop(): Promise<void>;
}

export function captureLogger(into: LogLine[]): Logger {
	return createLogger("debug", (line) => {
		into.push(JSON.parse(line) as LogLine);
		if (into.length > 20_000) into.splice(0, 10_000);
	});
}

export async function connectClient(mcpUrl: string): Promise<Client> {
	const client = new Client({ name: "t3code-mcp-drill", version: "1.0.0" });
	await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
	return client;
}

export async function startDrillStack(
	options: DrillStackOptions = {},
): Promise<DrillStack> {
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-drill-"));
	const statePath = options.statePath ?? join(dir, "state.sqlite");
	const sims = new Map<string, Sim>();
	const machines: MachineConfig[] = [];
	for (const name of options.machines ?? ["demo"]) {
		const sim = await startSim({ stepMs: 10, coalesceMs: 5, ...options.sim });
		sims.set(name, sim);
		machines.push(machineConfig({ name }, sim.url, sim.token));
	}
	const receiver = startReceiver();
	const logs: LogLine[] = [];
	const log = captureLogger(logs);
	const config: AppConfig = {
		file: join(dir, "t3code.toml"),
		machines,
		clients: [],
		server: testServerSettings(statePath, {
			hookUrl: receiver.url,
			hookSecret: TEST_SECRET,
			logLevel: "debug",
		}),
	};
	const timings = options.productionTimings ? {} : FAST_MACHINE;
	const server = await startServer(config, {
		log,
		clock: options.clock,
		retryScheduleS: options.retryScheduleS,
		machineFactory: (machine) =>
			createMachine(machine, {
				log: log.child({ machine: machine.name }),
				...timings,
			}),
	});
	const client = await connectClient(server.mcpUrl);
	return {
		server,
		sims,
		receiver,
		client,
		statePath,
		dir,
		logs,
		explain(threadId) {
			const services = server.services;
			const record = services.threadDeps.threads.get(threadId);
			const rows = services.events.outbox
				.forThread(threadId)
				.map((r) => `${r.type}/${r.status}/${r.attempts}`);
			const machine = record
				? services.fleet.get(record.machine)?.machine.thread(threadId)
				: undefined;
			return `record ${JSON.stringify(record && { watched: record.watched, last_run_id: record.last_run_id, last_status: record.last_status, baseline: record.baseline_ordinal })}; outbox [${rows.join(", ")}]; shell ${JSON.stringify(machine && { latestRunId: machine.latestRunId, status: machine.status })}`;
		},
		sim(name) {
			const sim = name ? sims.get(name) : sims.values().next().value;
			if (!sim) throw new Error(`no sim ${name}`);
			return sim;
		},
		async stop() {
			await client.close().catch(() => {});
			// Stop everything even when the server's own stop fails (a drill found a bug).
			const stopped = await server.stop().then(
				() => undefined,
				(error: unknown) => error,
			);
			await Promise.all([...sims.values()].map((s) => s.stop()));
			await receiver.stop();
			rmSync(dir, { recursive: true, force: true });
			if (stopped) throw stopped;
		},
	};
}

export interface ToolOutcome<T> {
	isError: boolean;
	data: T;
	text: string;
}

export async function call<T = Record<string, unknown>>(
	client: Client,
	name: string,
	args: Record<string, unknown> = {},
): Promise<ToolOutcome<T>> {
	const result = await client.callTool(
		{ name, arguments: args },
		{ timeout: 60_000 },
	);
	const content = (result.content ?? []) as { type: string; text?: string }[];
	return {
		isError: result.isError === true,
		data: (result.structuredContent ?? {}) as T,
		text: content.map((c) => c.text ?? "").join("\n"),
	};
}

/**
 * Dispatches a new watched thread, re-sending with the same request_id while the machine is
 * offline or the result is uncertain (what a careful agent does). Returns the thread id, or
 * null when it never went through before `deadlineMs`.
 */
export async function dispatchUntilAccepted(
	client: Client,
	machine: string,
	prompt: string,
	deadlineMs = 20_000,
): Promise<string | null> {
	const requestId = crypto.randomUUID();
	const deadline = Date.now() + deadlineMs;
	for (;;) {
		try {
			const r = await call<{ thread_id: string }>(client, "t3_dispatch", {
				machine,
				project: "demo",
				prompt,
				request_id: requestId,
			});
			if (!r.isError) return r.data.thread_id;
		} catch {
			// transport trouble: retry the same request_id
		}
		if (Date.now() > deadline) return null;
		await Bun.sleep(50);
	}
}

export async function until(
	predicate: () => boolean | Promise<boolean>,
	timeoutMs: number,
	what: string,
	stepMs = 10,
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await predicate())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await Bun.sleep(stepMs);
	}
}

/** Resolves true when it holds before the timeout, false otherwise (no throw). */
export async function eventually(
	predicate: () => boolean | Promise<boolean>,
	timeoutMs: number,
	stepMs = 20,
): Promise<boolean> {
	try {
		await until(predicate, timeoutMs, "condition", stepMs);
		return true;
	} catch {
		return false;
	}
}

/** A small deterministic PRNG (mulberry32), so a failing drill can be replayed by its seed. */
export function seeded(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

export function machineState(stack: DrillStack, name: string): string {
	return (
		stack.server.services.fleet.get(name)?.machine.status().state ?? "missing"
	);
}
