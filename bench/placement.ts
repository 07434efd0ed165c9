import { createFleet } from "../src/fleet/fleet.ts";
import { place } from "../src/pool/placement.ts";
import { createRunSlots, fleetShells } from "../src/rights/run-slots.ts";
import type { ProviderStatus } from "../src/t3/capabilities/provider-status.ts";
import type { Machine } from "../src/t3/machine-api.ts";
import type { ThreadShell } from "../src/t3/model.ts";
import { config } from "./lib/config.ts";
import { memoryMachine, memoryMachineConfigs } from "./lib/memory-machine.ts";
import { fmtSummary, summarize } from "./lib/stats.ts";
import { type Row, ratio } from "./lib/table.ts";

const TARGET_P50_MS = 1;

function usage(seed: number): ProviderStatus[] {
	const window = (kind: "session" | "weekly", used: number) => ({
		id: kind,
		kind,
		label: kind === "session" ? "Session" : "Weekly",
		usedPercent: used,
		resetsAt: new Date(Date.now() + 3_600_000).toISOString(),
	});
	return ["claudeAgent", "codex"].map((instanceId, i) => ({
		instanceId,
		driver: instanceId,
		ready: true,
		reason: null,
		usage: {
			checkedAt: new Date().toISOString(),
			unavailable: null,
			windows: [
				// One machine in fifty has its session window used up.
				window("session", seed % 50 === i ? 100 : (seed * 7 + i * 13) % 100),
				window("weekly", (seed * 3 + i) % 100),
			],
		},
	}));
}

function fakeMachine(name: string, index: number, threads: number): Machine {
	const providers = usage(index);
	return memoryMachine(
		name,
		index,
		threads,
		(id, t, project) => {
			const busy = (index + t) % 20 === 0;
			return {
				id,
				projectId: project.id,
				title: id,
				latestRunId: busy ? `${id}-r` : null,
				activeRunId: busy ? `${id}-r` : null,
				status: busy ? "running" : "idle",
				pendingRuntimeRequest: null,
				latestVisibleMessage: null,
			} as ThreadShell;
		},
		{ providers: () => providers },
	);
}

export async function benchPlacement(): Promise<{
	rows: Row[];
	raw: Record<string, unknown>;
}> {
	const machines = config.scaleTopMachines;
	const threads = config.scaleTopThreads;
	const perMachine = Math.floor(threads / machines);
	const configs = memoryMachineConfigs(machines, { maxActiveRuns: 50 });
	const fleet = createFleet(configs, (c) =>
		fakeMachine(c.name, configs.indexOf(c), perMachine),
	);
	const ledger = createRunSlots(fleetShells(fleet), Date.now);
	const input = {
		pattern: "*",
		fleet,
		project: "demo",
		providerFor: () => "claudeAgent",
		ledger,
		clientCap: null,
		now: Date.now(),
	};
	const once = () => {
		const placed = place(input);
		ledger.take(placed.caps).release();
		return placed;
	};
	const samples = config.quick ? 200 : 2_000;
	// Warm-up: the first placement builds each machine's busy-thread set (one pass each).
	const first = performance.now();
	const placed = once();
	const firstMs = performance.now() - first;
	for (let i = 0; i < 200; i++) once();
	const times: number[] = [];
	const floors: number[] = [];
	for (let i = 0; i < samples; i++) {
		const t0 = performance.now();
		once();
		times.push(performance.now() - t0);
		const t1 = performance.now();
		let online = 0;
		for (const e of fleet.list())
			if (e.machine.status().state === "online") online++;
		floors.push(performance.now() - t1 + (online < 0 ? 1 : 0));
	}
	const s = summarize(times);
	const f = summarize(floors);
	return {
		rows: [
			{
				figure: `placement, ${machines} machines / ${perMachine * machines} threads`,
				value: fmtSummary(s),
				baseline: `every machine's status read: ${fmtSummary(f)}`,
				ratio: `p50 ${ratio(s.p50, f.p50)}`,
				target: `p50 ≤ ${TARGET_P50_MS} ms`,
				pass: s.p50 <= TARGET_P50_MS,
			},
		],
		raw: {
			placement: s,
			floor: f,
			firstMs: Math.round(firstMs * 100) / 100,
			placedOn: placed.placement.machine,
			skipped: placed.placement.skipped.length,
		},
	};
}
