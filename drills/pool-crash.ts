/**
 * Drill: dispatches held across a pool (CONTRACT.md "One pool", "Holding") drain while the
 * connector is killed with SIGKILL at random points (seeded: DRILL_SEED replays it) and
 * restarted on the same state file. Checked on the simulators by thread id: every dispatch
 * starts exactly once (one thread on one machine, one run), none is lost, and no machine ever
 * runs more than its max_active_runs (sampled all along).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { type Sim, startSim } from "../src/sim/index.ts";
import {
	type ServerProcess,
	startServerProcess,
} from "../test/helpers/process.ts";
import { busyOn } from "../test/helpers/sim-busy.ts";
import { connectClient } from "../test/helpers/stack.ts";
import { seeded } from "./lib/harness.ts";
import type { DrillSize } from "./lib/stack-drill.ts";
import type { DrillReport } from "./lib/tally.ts";

const TOKEN = "pool-crash-ops-token-0123456789";
const CAP = 2;

/** One tool call's structured result, or null when it failed (a kill in between). */
async function call(
	client: Client,
	name: string,
	args: Record<string, unknown>,
): Promise<Record<string, unknown> | null> {
	try {
		const result = await client.callTool(
			{ name, arguments: args },
			{ timeout: 10_000 },
		);
		return result.isError
			? null
			: ((result.structuredContent ?? null) as Record<string, unknown> | null);
	} catch {
		return null;
	}
}

export async function poolCrashDrill({
	full,
}: DrillSize): Promise<DrillReport> {
	const startedAt = performance.now();
	const total = full ? 200 : 24;
	const kills = full ? 10 : 3;
	const seed = Number(process.env.DRILL_SEED ?? 47);
	const random = seeded(seed);
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-pool-crash-"));
	const names = ["m1", "m2", "m3", "m4", "m5"];
	const sims: Sim[] = [];
	for (const _ of names)
		sims.push(await startSim({ stepMs: 25, coalesceMs: 5 }));
	const env: Record<string, string> = {
		OPS_TOKEN: TOKEN,
		T3CODE_MCP_LOG_LEVEL: "error",
	};
	const tables = names.map((name, i) => {
		env[`T3_${name.toUpperCase()}_TOKEN`] = sims[i]?.token ?? "";
		return `[machines.${name}]\nurl = "${sims[i]?.url}"\ntoken_env = "T3_${name.toUpperCase()}_TOKEN"\nprojects = ["*"]\nmodel = "claudeAgent/claude-opus-5"\nmax_active_runs = ${CAP}\n`;
	});
	const options = {
		dir,
		machines: [],
		statePath: join(dir, "state.sqlite"),
		env,
		moreToml: [
			...tables,
			`[clients.ops]\ntoken_env = "OPS_TOKEN"\naccess = "full-access"\nmax_held = ${total}\n`,
		].join("\n"),
	};
	const auth = { authorization: `Bearer ${TOKEN}` };
	const peak = new Map<string, number>();
	let sampling = true;
	const sampler = (async () => {
		while (sampling) {
			sims.forEach((sim, i) => {
				const name = names[i] as string;
				peak.set(name, Math.max(peak.get(name) ?? 0, busyOn(sim).length));
			});
			await Bun.sleep(10);
		}
	})();
	let proc: ServerProcess | undefined;
	const problems: string[] = [];
	const ids = new Set<string>();
	/** How many had started on the sims at each kill (the kills fall while they drain). */
	const startedAtKill: number[] = [];
	try {
		proc = await startServerProcess(options);
		let client = await connectClient(proc.mcpUrl, auth);
		// Every dispatch first, 25 at a time (keyed: a retry is the same dispatch); most are held.
		for (let from = 0; from < total; from += 25) {
			const batch = Array.from(
				{ length: Math.min(25, total - from) },
				(_, k) => from + k,
			);
			const results = await Promise.all(
				batch.map((i) =>
					call(client, "t3_dispatch", {
						machine: "*",
						project: "demo",
						prompt: `slow ${i}`,
						idempotency_key: `pool-crash-${i}`,
						watch: false,
					}),
				),
			);
			results.forEach((result, k) => {
				if (result) ids.add(String(result.thread_id));
				else problems.push(`dispatch ${(batch[k] as number) + 1} failed`);
			});
		}
		await client.close().catch(() => {});
		// Kill at random moments while they drain.
		for (let k = 0; k < kills; k++) {
			await Bun.sleep(Math.floor(random() * 900));
			startedAtKill.push(
				sims.reduce((n, sim) => n + sim.threadIds().length, 0),
			);
			await proc.kill("SIGKILL");
			proc = await startServerProcess(options);
		}
		client = await connectClient(proc.mcpUrl, auth);
		const started = (id: string) =>
			sims.filter((s) => s.threadIds().includes(id)).length > 0;
		const deadline = Date.now() + (full ? 180_000 : 60_000);
		while (Date.now() < deadline) {
			const usage = await call(client, "t3_usage", {});
			const held = (usage?.held as { total?: number } | undefined)?.total;
			if (held === 0 && [...ids].every(started)) break;
			await Bun.sleep(100);
		}
		await client.close().catch(() => {});
	} finally {
		sampling = false;
		await sampler;
		await proc?.kill("SIGTERM").catch(() => 0);
	}
	let once = 0;
	let twice = 0;
	let lost = 0;
	for (const id of ids) {
		const on = sims.filter((s) => s.threadIds().includes(id));
		const runs = on.reduce(
			(n, s) =>
				n +
				((s.projection(id) as { runs?: unknown[] } | undefined)?.runs?.length ??
					0),
			0,
		);
		if (on.length === 0) lost++;
		else if (on.length === 1 && runs === 1) once++;
		else twice++;
	}
	const over = [...peak].filter(([, n]) => n > CAP);
	for (const [name, n] of over)
		problems.push(`machine ${name} ran ${n} at once (max_active_runs ${CAP})`);
	for (const sim of sims) await sim.stop();
	rmSync(dir, { recursive: true, force: true });
	return {
		drill: "pool-crash",
		runs: ids.size,
		expected: total,
		delivered: once,
		duplicates: 0,
		extraIds: twice,
		wrong: 0,
		lost: lost + (total - ids.size),
		seconds: (performance.now() - startedAt) / 1000,
		notes: [
			`${total} dispatches over ${names.length} machines at max_active_runs ${CAP}; ${kills} SIGKILLs (seed ${seed}; DRILL_SEED=… to replay) with ${startedAtKill.join(", ")} started; peak busy per machine ${[...peak].map(([n, v]) => `${n}=${v}`).join(" ")}`,
		],
		problems,
	};
}
