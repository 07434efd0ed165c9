/**
 * Holding (issue 47), in process against simulators on loopback (the connector's own services,
 * with a tap on each machine's `launchThread` stamping when a launch is sent):
 * 1. a run's outcome frame (the sim's send time) → the next held dispatch's launch sent, on a
 *    machine at max_active_runs 1 with a held dispatch waiting (target p50 ≤ 5 ms, p99 ≤ 20 ms);
 * 2. `BENCH_HELD_N` (10 000) dispatches held across `BENCH_HELD_MACHINES` (50) machines at
 *    max_active_runs 2: the RSS they add (target ≤ 20 MB), then the drain for a few seconds:
 *    after each run's outcome on a machine, how long until the next launch to that machine
 *    (the machine's idle gap; target: none over 50 ms).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningServer, startServer } from "../src/cli/serve.ts";
import type { AppConfig } from "../src/config/types.ts";
import { servicesForClient } from "../src/rights/for-client.ts";
import { isBusyShell } from "../src/rights/run-slots.ts";
import type { Services } from "../src/services.ts";
import { wallMs } from "../src/sim/runs/outcome-times.ts";
import { interrupt } from "../src/threads/control/interrupt.ts";
import { dispatch } from "../src/threads/dispatch/dispatch.ts";
import { silentLogger } from "../src/util/log.ts";
import {
	machineConfig,
	type Stack,
	startStack,
	testClient,
	testServerSettings,
	until,
} from "../test/helpers/stack.ts";
import { config } from "./lib/config.ts";
import { startFleet } from "./lib/fleet.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import type { Row } from "./lib/table.ts";

const env = process.env;
const heldCount = Number(env.BENCH_HELD_N ?? (config.quick ? 2_000 : 10_000));
const heldMachines = Number(env.BENCH_HELD_MACHINES ?? 50);
const latencySamples = config.quick ? 30 : 200;
const drainS = config.quick ? 3 : 10;
/** The drain's first second fills every machine at once (100 launches together): its gaps are not steady state. */
const SETTLE_MS = 1_000;

/** Stamps every launch sent to each machine: thread id → when, and per machine the times. */
function tapLaunches(services: Services) {
	const byThread = new Map<string, number>();
	const byMachine = new Map<string, number[]>();
	for (const entry of services.fleet.list()) {
		const machine = entry.machine;
		const send = machine.launchThread.bind(machine);
		const list: number[] = [];
		byMachine.set(entry.config.name, list);
		machine.launchThread = (input) => {
			const at = wallMs();
			list.push(at);
			if (typeof input.threadId === "string" && !byThread.has(input.threadId))
				byThread.set(input.threadId, at);
			return send(input);
		};
	}
	return { byThread, byMachine };
}

/** The client the benches dispatch as: every right, and room to hold them all. */
const BENCH_CLIENT = testClient("bench", "bench-token-0123456789abcdef", {
	maxHeld: heldCount,
});

const newThread = (
	services: Services,
	machine: string,
	prompt: string,
	watch = true,
) =>
	dispatch(
		servicesForClient(services, BENCH_CLIENT).threadDeps,
		{ machine, project: "demo", prompt, watch },
		null,
	);

/** The run of a thread on a sim (its first). */
const runOf = (stack: Stack, machine: string, threadId: string) =>
	(
		stack.sim(machine).projection(threadId) as
			| { runs?: { id: string }[] }
			| undefined
	)?.runs?.[0]?.id;

async function latency(): Promise<number[]> {
	const stack = await startStack({
		machines: [
			{ name: "m01", maxActiveRuns: 1, sim: { stepMs: 5, coalesceMs: 50 } },
		],
		clients: [BENCH_CLIENT],
	});
	try {
		const services = stack.server.services;
		await until(
			() => services.fleet.get("m01")?.machine.status().state === "online",
			10_000,
			"m01 online",
		);
		const tap = tapLaunches(services);
		let current = (await newThread(services, "m01", "long task")).thread_id;
		const times: number[] = [];
		for (let i = 0; i < latencySamples + 5; i++) {
			const held = await newThread(services, "*", "long task");
			if (held.run_status !== "held")
				throw new Error(`expected a held dispatch, got ${held.run_status}`);
			await until(
				() => runOf(stack, "m01", current) !== undefined,
				10_000,
				"the running run",
			);
			const runId = runOf(stack, "m01", current) as string;
			await Bun.sleep(5);
			stack.sim("m01").finishRun(current);
			await until(
				() => tap.byThread.has(held.thread_id),
				10_000,
				"the held launch",
			);
			const outcome = stack.sim("m01").runOutcome(runId);
			const sent = tap.byThread.get(held.thread_id) as number;
			if (outcome?.sentAt !== undefined && i >= 5)
				times.push(sent - outcome.sentAt);
			current = held.thread_id;
		}
		stack.sim("m01").finishRun(current);
		return times;
	} finally {
		await stack.stop();
	}
}

/**
 * Part 2. The simulators run in a subprocess (bench/lib/sim-fleet.ts) so their CPU is not the
 * connector's; the connector runs here. Every machine is first filled with long runs (so every
 * dispatch after that is held), then those are interrupted: the drain fills every machine and
 * goes on from run to run. A machine's idle gap is timed as the connector sees it: a run's end
 * shown on the machine's shell or thread stream → the next launch sent there.
 */
async function manyHeld() {
	const fleet = await startFleet(heldMachines, 0);
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-bench-held-"));
	let server: RunningServer | undefined;
	try {
		const config: AppConfig = {
			file: join(dir, "t3code.toml"),
			machines: fleet.machines.map((m) =>
				machineConfig({ name: m.name, maxActiveRuns: 2 }, m.url, m.token),
			),
			server: testServerSettings(join(dir, "state.sqlite"), {
				maxHeld: heldCount,
			}),
			clients: [BENCH_CLIENT],
			approvals: null,
		};
		server = await startServer(config, { log: silentLogger });
		const services = server.services;
		await until(
			() =>
				services.fleet
					.list()
					.every((e) => e.machine.status().state === "online"),
			60_000,
			"machines online",
		);
		const holding = services.holding;
		const tap = tapLaunches(services);
		const deps = servicesForClient(services, BENCH_CLIENT).threadDeps;
		const busy: string[] = [];
		for (const entry of services.fleet.list())
			for (let i = 0; i < 2; i++)
				busy.push(
					(
						await dispatch(
							deps,
							{
								machine: entry.config.name,
								project: "demo",
								prompt: "long task",
								watch: false,
							},
							null,
						)
					).thread_id,
				);
		const hold = async (n: number) => {
			const ids: string[] = [];
			for (let i = 0; i < n; i++) {
				const d = await dispatch(
					deps,
					{ machine: "*", project: "demo", prompt: "slow", watch: false },
					null,
				);
				if (d.run_status !== "held")
					throw new Error(`dispatch ${i} was not held (${d.run_status})`);
				ids.push(d.thread_id);
				// A held dispatch answers without I/O: let the sockets' turns run (as requests would).
				if (i % 20 === 19) await new Promise((r) => setImmediate(r));
			}
			return ids;
		};
		// Warm-up (code paths, statement caches, the state file's pages), then withdrawn.
		for (const id of await hold(Math.min(500, heldCount))) holding.withdraw(id);
		const settle = async () => {
			Bun.gc(true);
			await Bun.sleep(100);
			Bun.gc(true);
			return process.memoryUsage();
		};
		const before = await settle();
		await hold(heldCount);
		const after = await settle();
		const held = holding.count();
		// Each machine's ends (busy → idle) as the connector sees them.
		const ends = new Map<string, number[]>();
		for (const entry of services.fleet.list()) {
			const list: number[] = [];
			ends.set(entry.config.name, list);
			entry.machine.onChange((change) => {
				if (change.kind !== "thread") return;
				const was = change.previous;
				if (was && isBusyShell(was) && !isBusyShell(change.thread))
					list.push(wallMs());
			});
		}
		let lagMax = 0;
		let last = performance.now();
		const lagTimer = setInterval(() => {
			const now = performance.now();
			lagMax = Math.max(lagMax, now - last - 10);
			last = now;
		}, 10);
		const from = wallMs();
		// The long runs end: every machine has room, and the drain fills it from run to run.
		await Promise.all(busy.map((id) => interrupt(deps, id).catch(() => null)));
		await Bun.sleep(drainS * 1000);
		const to = wallMs();
		clearInterval(lagTimer);
		services.drain.stop();
		const gaps: number[] = [];
		for (const [name, list] of ends) {
			const launches = (tap.byMachine.get(name) ?? []).filter((t) => t >= from);
			for (const t of list) {
				if (t < from + SETTLE_MS || t > to - 500) continue;
				const next = launches.find((l) => l >= t);
				if (next !== undefined) gaps.push(next - t);
			}
		}
		return {
			addedMb: (after.rss - before.rss) / 1024 / 1024,
			heapAddedMb: (after.heapUsed - before.heapUsed) / 1024 / 1024,
			held,
			gaps,
			started: held - holding.count(),
			lagMaxMs: Math.round(lagMax),
		};
	} finally {
		await server?.stop();
		await fleet.stop();
		rmSync(dir, { recursive: true, force: true });
	}
}

export async function benchHeld(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const lat = summarize(await latency());
	const many = await manyHeld();
	const gap = summarize(many.gaps);
	const mb = Math.round(many.addedMb * 10) / 10;
	return {
		rows: [
			{
				figure: "held: outcome frame → next held launch sent (cap 1)",
				value: fmtSummary(lat),
				baseline: "-",
				ratio: "-",
				target: "p50 ≤ 5 ms, p99 ≤ 20 ms",
				pass: lat.p50 <= 5 && lat.p99 <= 20,
			},
			{
				figure: `held: ${many.held} held across ${heldMachines} machines, RSS added`,
				value: `${mb} MB (heap ${Math.round(many.heapAddedMb * 10) / 10} MB)`,
				baseline: "-",
				ratio: "-",
				target: "≤ 20 MB",
				pass: mb <= 20,
			},
			{
				figure: `held: drain at cap 2 (${drainS} s, ${many.started} started; after its first second), a machine's idle gap (connector's view)`,
				value: `${fmtSummary(gap)}; event loop lag max ${many.lagMaxMs} ms`,
				baseline: "-",
				ratio: "-",
				target: "max ≤ 50 ms",
				pass: gap.n > 0 && gap.max <= 50,
			},
		],
		raw: {
			latency: lat,
			rssAddedMb: mb,
			gaps: gap,
			held: many.held,
			started: many.started,
			heapAddedMb: many.heapAddedMb,
			lagMaxMs: many.lagMaxMs,
		},
	};
}
