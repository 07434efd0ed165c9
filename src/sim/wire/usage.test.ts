/**
 * The simulator's provider usage (USAGE-AND-QUEUES.md §1): `--usage` parsing, `usageLimits` in
 * `server.getConfig`, `providerStatuses` on `subscribeServerConfig` (the full list, debounced),
 * the usage-limit prompt's full session window, and none on the pre-release engine.
 */
import { afterEach, describe, expect, it } from "bun:test";
import { parseSimFlags, SimUsageError } from "../cli.ts";
import {
	type Frame,
	launchPayload,
	type RawClient,
	startSimWithClient,
} from "../test-client.ts";
import type { Sim } from "../types.ts";

let sim: Sim | undefined;
let c: RawClient | undefined;
afterEach(async () => {
	c?.close();
	await sim?.stop();
	sim = undefined;
	c = undefined;
});

const providerOf = (providers: Frame[], id: string) =>
	providers.find((p: Frame) => p.instanceId === id);

describe("sim --usage", () => {
	it("parses PROVIDER=KIND:USED_PERCENT[:RESETS_IN_MIN], repeatable", () => {
		expect(
			parseSimFlags([
				"--usage",
				"claudeAgent=session:100:90",
				"--usage",
				"codex=weekly:12.5",
			]).usage,
		).toEqual([
			{
				provider: "claudeAgent",
				kind: "session",
				usedPercent: 100,
				resetsInMin: 90,
			},
			{ provider: "codex", kind: "weekly", usedPercent: 12.5 },
		]);
		for (const bad of [
			"claudeAgent",
			"x=session",
			"codex=session:101",
			"=a:1",
			"nobody=session:5",
		])
			expect(() => parseSimFlags(["--usage", bad])).toThrow(SimUsageError);
	});
});

describe("usage limits on the wire", () => {
	it("server.getConfig and the config stream's snapshot carry usageLimits; setUsage pushes the full list", async () => {
		({ sim, client: c } = await startSimWithClient({
			stepMs: 2,
			coalesceMs: 2,
			usage: [
				{
					provider: "claudeAgent",
					kind: "session",
					usedPercent: 40,
					resetsInMin: 60,
				},
			],
		}));
		const config = (await c.call("server.getConfig", {})).value;
		const claude = providerOf(config.providers, "claudeAgent");
		expect(claude.usageLimits.windows).toEqual([
			{
				id: "five_hour",
				kind: "session",
				label: "Session",
				usedPercent: 40,
				resetsAt: expect.any(String),
			},
		]);
		expect(typeof claude.usageLimits.checkedAt).toBe("string");
		// A provider without windows reports none: no key at all.
		expect("usageLimits" in providerOf(config.providers, "codex")).toBe(false);
		const stream = c.stream("subscribeServerConfig", {});
		const first = await stream.waitFor(() => true);
		expect(
			providerOf(first.config.providers, "claudeAgent").usageLimits.windows[0]
				.usedPercent,
		).toBe(40);
		sim.setUsage("claudeAgent", [{ kind: "session", usedPercent: 70 }]);
		sim.setUsage("claudeAgent", [{ kind: "weekly", usedPercent: 20 }]);
		// Two changes within 200 ms: the second goes out at the end of the window, with both.
		const change = await stream.waitFor(
			(i) =>
				i.type === "providerStatuses" &&
				providerOf(i.payload.providers, "claudeAgent").usageLimits.windows
					.length === 2,
			2000,
		);
		expect(change.payload.providers.length).toBe(6);
		expect(
			providerOf(
				change.payload.providers,
				"claudeAgent",
			).usageLimits.windows.map((w: Frame) => [w.kind, w.usedPercent]),
		).toEqual([
			["session", 70],
			["weekly", 20],
		]);
	});

	it("the usage-limit prompt puts the provider's session window at 100 % until its reset", async () => {
		let projectId: string;
		({
			sim,
			client: c,
			projectId,
		} = await startSimWithClient({ stepMs: 2, coalesceMs: 2 }));
		const stream = c.stream("subscribeServerConfig", {});
		await stream.waitFor(() => true);
		await c.call(
			"orchestration.launchThread",
			launchPayload(projectId, "hit the usage limit"),
		);
		const change = await stream.waitFor(
			(i) =>
				i.type === "providerStatuses" &&
				providerOf(i.payload.providers, "codex").usageLimits !== undefined,
			3000,
		);
		const [window] = providerOf(change.payload.providers, "codex").usageLimits
			.windows;
		expect(window.kind).toBe("session");
		expect(window.usedPercent).toBe(100);
		expect(Date.parse(window.resetsAt)).toBeGreaterThan(Date.now());
	});

	it("the pre-release engine reports no usage", async () => {
		({ sim, client: c } = await startSimWithClient({
			compat: "prerelease",
			usage: [{ provider: "claudeAgent", kind: "session", usedPercent: 40 }],
		}));
		const config = (await c.call("server.getConfig", {})).value;
		for (const p of config.providers) expect("usageLimits" in p).toBe(false);
	});
});
