/**
 * `max_active_runs` under bursts (CONTRACT.md "Trust round three"), over HTTP with the official
 * client against the simulator over real sockets: many dispatches sent at once never start more
 * runs than the cap (sampled on the simulator all through the burst), slots come back after
 * failed dispatches and ended runs, a message into a busy thread adds nothing, and a restart
 * neither leaks nor loses slots.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import type { ClientConfig } from "../../src/config/types.ts";
import type { Sim } from "../../src/sim/index.ts";
import { busyOn } from "../helpers/sim-busy.ts";
import {
	callTool,
	connectAs,
	type Stack,
	startStack,
	testClient,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";

const TOKENS = {
	one: "cap-one-token-0123456789",
	three: "cap-three-token-012345678",
	ops: "ops-token-0123456789012",
};

const client = (name: keyof typeof TOKENS, rights: Partial<ClientConfig>) =>
	testClient(name, TOKENS[name], rights);

let stack: Stack;
const as: Partial<Record<keyof typeof TOKENS, Client>> = {};
const sim = (): Sim => stack.sim("demo");

/** Threads the simulator runs now (a run preparing, starting, running, waiting or queued). */
const busyOnSim = (): string[] => busyOn(sim());

async function connectAll() {
	for (const name of Object.keys(TOKENS) as (keyof typeof TOKENS)[])
		as[name] = await connectAs(stack, TOKENS[name]);
	await untilMachinesOnline(as.ops as Client);
}

beforeAll(async () => {
	stack = await startStack({
		machines: [{ name: "demo", projects: ["*"] }],
		clients: [
			client("one", { access: "auto", maxActiveRuns: 1, approve: false }),
			client("three", { access: "auto", maxActiveRuns: 3, approve: false }),
			client("ops", { access: "full-access" }),
		],
	});
	await connectAll();
});
afterAll(async () => {
	for (const c of Object.values(as)) await c?.close();
	await stack?.stop();
});

const dispatch = (who: Client, extra: Record<string, unknown> = {}) =>
	callTool<{ thread_id: string; queued: boolean }>(who, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt: "long task",
		...extra,
	});

/** Runs `work` while sampling the simulator's busy threads at every turn; the peak seen. */
async function sampled<T>(
	work: () => Promise<T>,
): Promise<{ value: T; peak: number }> {
	let peak = 0;
	let sampling = true;
	const sampler = (async () => {
		while (sampling) {
			peak = Math.max(peak, busyOnSim().length);
			await new Promise((r) => setImmediate(r));
		}
	})();
	const value = await work();
	sampling = false;
	await sampler;
	return { value, peak: Math.max(peak, busyOnSim().length) };
}

/** Sends `n` dispatches at once, sampling the simulator's busy threads throughout. */
async function burst(who: Client, n: number) {
	const { value, peak } = await sampled(() =>
		Promise.all(Array.from({ length: n }, () => dispatch(who))),
	);
	return { results: value, peak };
}

/** Ends every run on the simulator, and waits until the connector has seen them end. */
async function finishAll() {
	for (const id of busyOnSim()) sim().finishRun(id);
	await until(() => busyOnSim().length === 0, 10_000, "runs to end");
	await until(
		async () =>
			(
				await callTool<{ threads: unknown[] }>(as.ops as Client, "t3_threads", {
					state: "active",
				})
			).data.threads.length === 0,
		10_000,
		"the connector to see the runs end",
	);
}

describe("max_active_runs under a burst", () => {
	test("20 dispatches at once with a cap of 3: exactly 3 start, 17 are refused", async () => {
		const { results, peak } = await burst(as.three as Client, 20);
		const started = results.filter((r) => !r.isError);
		const refused = results.filter((r) => r.isError);
		expect(started.length).toBe(3);
		expect(refused.length).toBe(17);
		for (const r of refused)
			expect(r.text).toStartWith("max_active_runs_reached:");
		expect(peak).toBeLessThanOrEqual(3);
		expect(busyOnSim().length).toBe(3);
	});

	test("a message into a thread already busy adds nothing: a follow-up at the cap is queued", async () => {
		const threads = await callTool<{ threads: { thread_id: string }[] }>(
			as.three as Client,
			"t3_threads",
			{ state: "active" },
		);
		const busy = threads.data.threads[0]?.thread_id as string;
		const followUp = await callTool<{ queued: boolean }>(
			as.three as Client,
			"t3_dispatch",
			{ thread_id: busy, prompt: "and then this" },
		);
		expect(followUp.isError).toBe(false);
		expect(followUp.data.queued).toBe(true);
		expect((await dispatch(as.three as Client)).text).toStartWith(
			"max_active_runs_reached:",
		);
	});

	test("slots come back when the runs end", async () => {
		await finishAll();
		const { results, peak } = await burst(as.three as Client, 20);
		expect(results.filter((r) => !r.isError).length).toBe(3);
		expect(peak).toBeLessThanOrEqual(3);
		await finishAll();
	});

	test("two clients at once, 50 each at caps 1 and 3: each holds its own cap", async () => {
		const {
			value: [one, three],
			peak,
		} = await sampled(() =>
			Promise.all([
				Promise.all(
					Array.from({ length: 50 }, () => dispatch(as.one as Client)),
				),
				Promise.all(
					Array.from({ length: 50 }, () => dispatch(as.three as Client)),
				),
			]),
		);
		const other = [...one, ...three].filter(
			(r) => r.isError && !r.text.startsWith("max_active_runs_reached:"),
		);
		expect(other.map((r) => r.text)).toEqual([]);
		expect(one.filter((r) => !r.isError).length).toBe(1);
		expect(three.filter((r) => !r.isError).length).toBe(3);
		expect(peak).toBeLessThanOrEqual(4);
		await finishAll();
	});

	test("failed dispatches give their slot back", async () => {
		const failed = await Promise.all(
			Array.from({ length: 5 }, () =>
				dispatch(as.one as Client, { project: "no-such-project" }),
			),
		);
		for (const f of failed) expect(f.isError).toBe(true);
		// T3 refuses a follow-up: its slot comes back too.
		const ok = await dispatch(as.ops as Client, {
			prompt: "say hello",
			runtime_mode: "auto",
		});
		await callTool(as.ops as Client, "t3_wait", {
			thread_id: ok.data.thread_id,
			timeout: 20,
		});
		sim().refuseNextCommand("message.dispatch");
		const refusedByT3 = await callTool(as.one as Client, "t3_dispatch", {
			thread_id: ok.data.thread_id,
			prompt: "long task",
		});
		expect(refusedByT3.isError).toBe(true);
		expect(refusedByT3.text).toContain("refused");
		const started = await dispatch(as.one as Client);
		expect(started.isError).toBe(false);
	});

	test("a restart neither leaks nor loses slots", async () => {
		expect(busyOnSim().length).toBe(1);
		for (const c of Object.values(as)) await c?.close();
		await stack.restartServer();
		await connectAll();
		const refused = await dispatch(as.one as Client);
		expect(refused.text).toStartWith("max_active_runs_reached:");
		await finishAll();
		const again = await dispatch(as.one as Client);
		expect(again.isError).toBe(false);
		await finishAll();
	});
});
