/**
 * Placement (CONTRACT.md "One pool") on fake machines: room and order, every skip reason, the
 * client's reach, refusals, and bursts taking slots synchronously never overshooting a cap.
 */
import { describe, expect, it } from "bun:test";
import type { ClientConfig, MachineConfig } from "../config/types.ts";
import { createFleet, type Fleet } from "../fleet/fleet.ts";
import { RightsError } from "../rights/refusal.ts";
import { clientCap } from "../rights/run-limits.ts";
import { createRunSlots, fleetShells } from "../rights/run-slots.ts";
import { scopeFleet } from "../rights/scoped-fleet.ts";
import type { ProviderStatus } from "../t3/capabilities/provider-status.ts";
import type { Machine, MachineState, ShellChange } from "../t3/machine-api.ts";
import type { ProjectShell, ThreadShell } from "../t3/model.ts";
import { type PlaceInput, place } from "./placement.ts";

const NOW = Date.parse("2026-12-05T12:00:00.000Z");
const AHEAD = "2026-12-05T13:00:00.000Z";
const PAST = "2026-12-05T11:00:00.000Z";

interface FakeSpec {
	name: string;
	state?: MachineState;
	projects?: string[];
	cap?: number;
	/** Busy thread count on the shell. */
	busy?: number;
	/** Null: T3 said nothing yet. */
	providers?: ProviderStatus[] | null;
	/** Extra threads on the shell. */
	threads?: Partial<ThreadShell>[];
}

const provider = (
	instanceId: string,
	windows: { usedPercent: number | null; resetsAt?: string | null }[] | null,
	ready = true,
): ProviderStatus => ({
	instanceId,
	driver: instanceId,
	ready,
	reason: ready ? null : `${instanceId} is not authenticated on the machine.`,
	usage:
		windows === null
			? null
			: {
					checkedAt: null,
					unavailable: null,
					windows: windows.map((w, i) => ({
						id: `w${i}`,
						kind: i === 0 ? "session" : "weekly",
						label: i === 0 ? "Session" : "Weekly",
						usedPercent: w.usedPercent,
						resetsAt: w.resetsAt ?? null,
					})),
				},
});

function shell(id: string, over: Partial<ThreadShell> = {}): ThreadShell {
	return {
		id,
		projectId: "p-demo",
		title: id,
		latestRunId: null,
		activeRunId: null,
		status: "idle",
		pendingRuntimeRequest: null,
		latestVisibleMessage: null,
		...over,
	} as ThreadShell;
}

/** A fleet of fake machines; `emit(name, change)` plays a shell change on one. */
function fakePool(specs: FakeSpec[]) {
	const listeners = new Map<string, Set<(c: ShellChange) => void>>();
	const shells = new Map<string, ThreadShell[]>();
	const machines = new Map<string, Machine>();
	for (const s of specs) {
		const threads = [
			...Array.from({ length: s.busy ?? 0 }, (_, i) =>
				shell(`${s.name}-busy-${i}`, {
					status: "running",
					activeRunId: `r-${i}`,
					latestRunId: `r-${i}`,
				}),
			),
			...(s.threads ?? []).map((t, i) => shell(`${s.name}-t${i}`, t)),
		];
		shells.set(s.name, threads);
		const projects: ProjectShell[] = (s.projects ?? ["demo"]).map((title) => ({
			id: `p-${title}`,
			title,
			workspaceRoot: `/srv/${title}`,
			defaultModelSelection: null,
		}));
		const set = new Set<(c: ShellChange) => void>();
		listeners.set(s.name, set);
		machines.set(s.name, {
			name: s.name,
			url: "http://127.0.0.1:1",
			status: () => ({
				state: s.state ?? "online",
				reason: s.state && s.state !== "online" ? `${s.name} is down` : null,
				serverVersion: null,
				lastEventAt: null,
			}),
			projects: () => projects,
			threads: () => shells.get(s.name) ?? [],
			thread: (id: string) => shells.get(s.name)?.find((t) => t.id === id),
			providers: () =>
				s.providers === undefined
					? [provider("claudeAgent", [{ usedPercent: 10 }])]
					: s.providers,
			onChange(listener: (c: ShellChange) => void) {
				set.add(listener);
				return () => set.delete(listener);
			},
		} as unknown as Machine);
	}
	const configs: MachineConfig[] = specs.map((s) => ({
		name: s.name,
		url: "http://127.0.0.1:1",
		tokenEnv: "T",
		tokenFile: null,
		token: "t",
		projects: ["*"],
		model: { instanceId: "claudeAgent", model: "claude-opus-5" },
		options: [],
		...(s.cap === undefined ? {} : { maxActiveRuns: s.cap }),
	}));
	const fleet: Fleet = createFleet(
		configs,
		(c) => machines.get(c.name) as Machine,
	);
	const ledger = createRunSlots(fleetShells(fleet), () => NOW);
	const emit = (name: string, thread: ThreadShell) => {
		const list = shells.get(name) ?? [];
		const at = list.findIndex((t) => t.id === thread.id);
		if (at >= 0) list[at] = thread;
		else list.push(thread);
		for (const l of listeners.get(name) ?? [])
			l({ kind: "thread", thread, sequence: 1, previous: undefined });
	};
	const input = (over: Partial<PlaceInput> = {}): PlaceInput => ({
		pattern: "*",
		fleet,
		project: "demo",
		providerFor: (entry) => entry.config.model?.instanceId ?? null,
		ledger,
		clientCap: null,
		now: NOW,
		...over,
	});
	return { fleet, ledger, emit, input };
}

const refusal = (run: () => unknown): RightsError => {
	try {
		run();
	} catch (error) {
		if (error instanceof RightsError) return error;
		throw error;
	}
	throw new Error("expected a refusal");
};

const client = (over: Partial<ClientConfig>): ClientConfig => ({
	name: "agent",
	tokenEnv: "AGENT_TOKEN",
	tokenFile: null,
	token: "agent-token-0123456789",
	access: "auto",
	machines: ["*"],
	projects: ["*"],
	approve: false,
	maxActiveRuns: null,
	...over,
});

describe("placement order", () => {
	it("fewest busy threads first", () => {
		const { input } = fakePool([
			{ name: "a", busy: 2 },
			{ name: "b", busy: 1 },
			{ name: "c", busy: 3 },
		]);
		expect(place(input()).placement).toEqual({
			machine: "b",
			reason: "fewest_busy",
			skipped: [],
		});
	});

	it("then the lowest used_percent (the highest window of the provider), then config order", () => {
		const { input } = fakePool([
			{
				name: "a",
				providers: [
					provider("claudeAgent", [{ usedPercent: 10 }, { usedPercent: 80 }]),
				],
			},
			{
				name: "b",
				providers: [provider("claudeAgent", [{ usedPercent: 50 }])],
			},
		]);
		expect(place(input()).placement).toMatchObject({
			machine: "b",
			reason: "lowest_usage",
		});
		const tie = fakePool([{ name: "a" }, { name: "b" }]);
		expect(place(tie.input()).placement).toMatchObject({
			machine: "a",
			reason: "config_order",
		});
	});

	it("unknown usage counts as equal: config order decides, never 0 %", () => {
		const { input } = fakePool([
			{
				name: "a",
				providers: [provider("claudeAgent", [{ usedPercent: 60 }])],
			},
			// T3 reports the window without a percent, or no usage at all, or nothing yet.
			{
				name: "b",
				providers: [provider("claudeAgent", [{ usedPercent: null }])],
			},
			{ name: "c", providers: [provider("claudeAgent", null)] },
			{ name: "d", providers: null },
		]);
		expect(place(input()).placement).toEqual({
			machine: "a",
			reason: "config_order",
			skipped: [],
		});
	});
});

describe("every skip reason", () => {
	it("lists each machine without room, with its reason, and places on the one with room", () => {
		const { input } = fakePool([
			{ name: "off", state: "offline" },
			{ name: "unsynced", state: "connecting" },
			{ name: "noproj", projects: ["other"] },
			{
				name: "notready",
				providers: [provider("claudeAgent", [{ usedPercent: 0 }], false)],
			},
			{ name: "capped", cap: 1, busy: 1 },
			{
				name: "window",
				providers: [
					provider("claudeAgent", [{ usedPercent: 100, resetsAt: AHEAD }]),
				],
			},
			{
				name: "limited",
				threads: [
					{
						status: "failed",
						lastErrorClass: "usage_limit",
						usageLimitResetAt: AHEAD,
						modelSelection: {
							instanceId: "claudeAgent",
							model: "claude-opus-5",
						} as ThreadShell["modelSelection"],
					},
				],
			},
			{ name: "room", busy: 1 },
		]);
		const placed = place(input());
		expect(placed.placement.machine).toBe("room");
		expect(placed.placement.reason).toBe("only_room");
		expect(placed.placement.skipped.map((s) => [s.machine, s.reason])).toEqual([
			["off", "offline"],
			["unsynced", "offline"],
			["noproj", "no_project"],
			["notready", "provider_not_ready"],
			["capped", "machine_cap"],
			["window", "usage_limit"],
			["limited", "usage_limit"],
		]);
		const detail = Object.fromEntries(
			placed.placement.skipped.map((s) => [s.machine, s.detail]),
		);
		expect(detail.unsynced).toContain("not synchronized");
		expect(detail.capped).toBe("1 of max_active_runs 1 busy");
		expect(detail.window).toBe(
			`claudeAgent's Session window is at 100 % until ${AHEAD}`,
		);
		expect(detail.limited).toContain(AHEAD);
	});

	it("a used-up window whose reset passed, and a usage_limit failure whose reset passed, leave room", () => {
		const { input } = fakePool([
			{
				name: "a",
				busy: 1,
				providers: [
					provider("claudeAgent", [{ usedPercent: 100, resetsAt: PAST }]),
				],
			},
			{
				name: "b",
				busy: 2,
				threads: [
					{
						status: "failed",
						lastErrorClass: "usage_limit",
						usageLimitResetAt: PAST,
					},
				],
			},
		]);
		expect(place(input()).placement).toEqual({
			machine: "a",
			reason: "fewest_busy",
			skipped: [],
		});
		// A used-up window without a reset time stays used up.
		const open = fakePool([
			{
				name: "a",
				providers: [provider("claudeAgent", [{ usedPercent: 100 }])],
			},
			{ name: "b" },
		]);
		expect(place(open.input()).placement.skipped).toEqual([
			{
				machine: "a",
				reason: "usage_limit",
				detail: "claudeAgent's Session window is at 100 %",
			},
		]);
	});

	it("a provider not on the machine, or no model at all, is provider_not_ready", () => {
		const { input } = fakePool([
			{ name: "a", providers: [provider("codex", [])] },
			{ name: "b" },
		]);
		expect(place(input()).placement.skipped).toEqual([
			{
				machine: "a",
				reason: "provider_not_ready",
				detail: "claudeAgent is not on this machine",
			},
		]);
		const none = fakePool([{ name: "a" }]);
		const error = refusal(() => place(none.input({ providerFor: () => null })));
		expect(error.code).toBe("no_capacity");
		expect(error.message).toContain("a (provider_not_ready: no model to use");
	});

	it("client_cap when the client is at its own max_active_runs", () => {
		const { input, ledger } = fakePool([{ name: "a" }, { name: "b" }]);
		const cap = clientCap(client({ maxActiveRuns: 1 }), () => []);
		// One slot taken, not yet shown on any shell.
		const first = place(input({ clientCap: cap }));
		ledger.take(first.caps);
		const error = refusal(() => place(input({ clientCap: cap })));
		expect(error.code).toBe("no_capacity");
		expect(error.message).toContain("a (client_cap:");
		expect(error.message).toContain("b (client_cap:");
	});
});

describe("refusals and reach", () => {
	it("no room: no_capacity listing each candidate's reason code", () => {
		const { input } = fakePool([
			{ name: "a", cap: 1, busy: 1 },
			{ name: "b", state: "offline" },
		]);
		const error = refusal(() => place(input()));
		expect(error.code).toBe("no_capacity");
		expect(error.message).toMatch(
			/^no_capacity: no machine matching "\*" has room now: a \(machine_cap: .*\); b \(offline: .*\)\./,
		);
	});

	it("no reached machine has the project: no_project; a pattern matching none names the machines reached", () => {
		const { input, fleet } = fakePool([
			{ name: "a", projects: ["x"] },
			{ name: "b", projects: ["y"] },
		]);
		expect(refusal(() => place(input())).code).toBe("no_project");
		const error = refusal(() => place(input({ pattern: "linux-*" })));
		expect(error.code).toBe("no_machine");
		expect(error.message).toContain("the machines you reach: a, b");
		const narrow = scopeFleet(fleet, client({ machines: ["a"] }));
		expect(
			refusal(() => place(input({ pattern: "b*", fleet: narrow }))).message,
		).toContain("the machines you reach: a.");
	});

	it("machines outside the client's reach never appear; a project outside it is no_project", () => {
		const { input, fleet } = fakePool([
			{ name: "a", cap: 1, busy: 1 },
			{ name: "b", projects: ["demo", "secret"] },
			{
				name: "c",
				providers: [provider("claudeAgent", [{ usedPercent: 100 }])],
			},
		]);
		const reach = scopeFleet(fleet, client({ machines: ["a", "b"] }));
		const placed = place(input({ fleet: reach }));
		expect(placed.placement).toEqual({
			machine: "b",
			reason: "only_room",
			skipped: [
				{ machine: "a", reason: "machine_cap", detail: expect.any(String) },
			],
		});
		const noSecret = scopeFleet(
			fleet,
			client({ machines: ["b"], projects: ["demo"] }),
		);
		const error = refusal(() =>
			place(input({ fleet: noSecret, project: "secret" })),
		);
		expect(error.code).toBe("no_project");
		expect(error.message).not.toContain("c (");
	});
});

describe("bursts", () => {
	it("placements taken at once spread by busy threads and never overshoot a machine's cap", () => {
		const { input, ledger } = fakePool([
			{ name: "a", cap: 2 },
			{ name: "b", cap: 1 },
			{ name: "c", cap: 3, busy: 1 },
		]);
		const placed: string[] = [];
		const refused: string[] = [];
		for (let i = 0; i < 10; i++) {
			try {
				const p = place(input());
				ledger.take(p.caps);
				placed.push(p.placement.machine);
			} catch (error) {
				refused.push((error as RightsError).code);
			}
		}
		expect(placed.filter((m) => m === "a").length).toBe(2);
		expect(placed.filter((m) => m === "b").length).toBe(1);
		expect(placed.filter((m) => m === "c").length).toBe(2);
		expect(refused).toEqual([
			"no_capacity",
			"no_capacity",
			"no_capacity",
			"no_capacity",
			"no_capacity",
		]);
		// Fewest busy first: a and b (0) before c (1).
		expect(placed.slice(0, 2)).toEqual(["a", "b"]);
	});

	it("a thread going busy elsewhere (T3's UI) takes a machine's room", () => {
		const { input, emit } = fakePool([{ name: "a", cap: 1 }, { name: "b" }]);
		expect(place(input()).placement.machine).toBe("a");
		emit("a", shell("from-ui", { status: "running", activeRunId: "r" }));
		expect(place(input()).placement).toMatchObject({
			machine: "b",
			skipped: [{ machine: "a", reason: "machine_cap" }],
		});
	});
});
