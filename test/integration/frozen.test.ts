/**
 * A frozen T3 server: the process is stopped (SIGSTOP) with its sockets open, so nothing
 * closes and nothing answers. With `ping_timeout_s = 1`, the machine is offline within about a
 * second, and tool calls to it fail within that time with the machine's state instead of
 * hanging (15 s per attempt before). Once the process continues, the machine comes back.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { freePort } from "../helpers/process.ts";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const TOKEN = "frozen-sim-token-0123456789";
/** Generous against a loaded machine, far below the 15 s a call used to hang. */
const PROMPT_MS = 4_000;

let sim: ReturnType<typeof Bun.spawn>;
let stack: Stack;

beforeAll(async () => {
	const port = await freePort();
	// A separate process, so it can be stopped like a hung server.
	sim = Bun.spawn(
		[
			process.execPath,
			"run",
			join(ROOT, "src/index.ts"),
			"sim",
			"--host",
			"127.0.0.1",
			"--port",
			String(port),
			"--token",
			TOKEN,
		],
		{ stdout: "ignore", stderr: "ignore" },
	);
	const url = `http://127.0.0.1:${port}`;
	await until(
		() =>
			fetch(`${url}/.well-known/t3/environment`).then(
				(r) => r.ok,
				() => false,
			),
		15_000,
		"the sim process to listen",
	);
	stack = await startStack({
		machines: [{ name: "frozen", url, token: TOKEN }],
		server: { pingTimeoutS: 1 },
	});
});
afterAll(async () => {
	sim.kill("SIGCONT");
	await stack?.stop();
	sim.kill("SIGKILL");
	await sim.exited;
});

/** Runs a tool call and how long it took. */
async function timed(
	client: Awaited<ReturnType<Stack["client"]>>,
	name: string,
	args: Record<string, unknown>,
) {
	const started = performance.now();
	const outcome = await callTool(client, name, args);
	return { ...outcome, ms: performance.now() - started };
}

test("a stopped T3 process is offline within the ping timeout, and calls say so at once", async () => {
	const client = await stack.client();
	await untilMachinesOnline(client);
	const dispatched = await callTool<{ thread_id: string }>(
		client,
		"t3_dispatch",
		{ machine: "frozen", project: "demo", prompt: "hello" },
	);
	expect(dispatched.isError).toBe(false);
	const threadId = dispatched.data.thread_id;

	sim.kill("SIGSTOP");
	// The machine still looks online: this call is sent into the silence.
	const during = await timed(client, "t3_dispatch", {
		thread_id: threadId,
		prompt: "are you there?",
	});
	expect(during.isError).toBe(true);
	expect(during.text).toContain("is offline");
	expect(during.text).toContain("no answer to ping for 1000 ms");
	expect(during.ms).toBeLessThan(PROMPT_MS);

	const machines = await callTool<{
		machines: { state: string; reason: string | null }[];
	}>(client, "t3_machines");
	expect(machines.data.machines[0]?.state).toBe("offline");

	for (const [name, args] of [
		["t3_thread", { thread_id: threadId }],
		["t3_projects", { machine: "frozen" }],
		["t3_dispatch", { machine: "frozen", project: "demo", prompt: "x" }],
	] as const) {
		const call = await timed(client, name, args);
		expect(call.isError).toBe(true);
		expect(call.text).toContain("offline");
		expect(call.ms).toBeLessThan(PROMPT_MS);
	}

	sim.kill("SIGCONT");
	await untilMachinesOnline(client);
	const projects = await callTool(client, "t3_projects", { machine: "frozen" });
	expect(projects.isError).toBe(false);
}, 30_000);
