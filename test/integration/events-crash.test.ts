/**
 * A connector killed with SIGKILL between recording a transition and the webhook POST: the
 * row is durable, so the restarted process delivers it (same event id if it was sent twice).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { startServerProcess } from "../helpers/process.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	connectClient,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";

let dir: string;
let sim: Sim;
let receiver: Receiver;
beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-crash-"));
	sim = await startSim({ stepMs: 5, coalesceMs: 5 });
	receiver = startReceiver();
});
afterAll(async () => {
	await receiver.stop();
	await sim.stop();
	rmSync(dir, { recursive: true, force: true });
});

test("kill -9 while the webhook POST is in flight: delivered after restart, same id", async () => {
	const statePath = join(dir, "state.sqlite");
	const options = {
		dir,
		statePath,
		machines: [{ name: "demo", url: sim.url, token: sim.token }],
		env: {
			T3CODE_MCP_HOOK_URL: receiver.url,
			T3CODE_MCP_HOOK_SECRET: TEST_SECRET,
		},
	};
	// The receiver accepts the POST but never answers: the transition is recorded, the POST open.
	receiver.setMode("hang");
	const first = await startServerProcess(options);
	const client = await connectClient(first.mcpUrl, {
		"X-Conversation-Origin": "conv-crash",
	});
	await untilMachinesOnline(client);
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt: "crash during delivery",
	});
	await until(() => receiver.attempts() >= 1, 10_000, "the POST to arrive");
	await first.kill("SIGKILL");
	await client.close().catch(() => {});
	receiver.setMode("ok");
	const second = await startServerProcess(options);
	try {
		await until(
			() =>
				receiver.deliveries.some((e) => e.body.thread_id === d.data.thread_id),
			15_000,
			"redelivery",
		);
		const events = receiver.deliveries.filter(
			(e) => e.body.thread_id === d.data.thread_id,
		);
		expect(events).toHaveLength(1);
		expect(events[0]?.body).toMatchObject({
			type: "thread.completed",
			origin: "conv-crash",
			thread_seq: 1,
		});
		expect(events[0]?.verified).toBe(true);
	} finally {
		expect(await second.kill("SIGTERM")).toBe(0);
	}
});
