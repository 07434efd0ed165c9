/**
 * The connector may restart at any time: a new process on the same sqlite file still finds
 * and waits on what the old one dispatched, even after a SIGKILL right after a dispatch.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { type ServerProcess, startServerProcess } from "../helpers/process.ts";
import {
	callTool,
	connectClient,
	startStack,
	untilMachinesOnline,
} from "../helpers/stack.ts";

let dir: string;
let sim: Sim;
beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-restart-"));
	sim = await startSim({ stepMs: 150, coalesceMs: 5 });
});
afterAll(async () => {
	await sim.stop();
	rmSync(dir, { recursive: true, force: true });
});

test("after a restart on the same state, t3_thread and t3_wait still find the thread", async () => {
	const stack = await startStack();
	try {
		let client = await stack.client();
		const d = await callTool<{ thread_id: string; run_id: string }>(
			client,
			"t3_dispatch",
			{
				machine: "demo",
				project: "demo",
				prompt: "before restart",
			},
		);
		await stack.restartServer();
		client = await stack.client();
		const t = await callTool<{ thread_id: string; watched: boolean }>(
			client,
			"t3_thread",
			{ thread_id: d.data.thread_id },
		);
		expect(t.isError).toBe(false);
		expect(t.data.watched).toBe(true);
		const w = await callTool<{ outcome: string; run_id: string }>(
			client,
			"t3_wait",
			{ thread_id: d.data.thread_id, timeout: 20 },
		);
		expect(w.data).toMatchObject({
			outcome: "completed",
			run_id: d.data.run_id,
		});
	} finally {
		await stack.stop();
	}
});

test("kill -9 between a dispatch and its first shell update: after restart t3_wait reports that run", async () => {
	const statePath = join(dir, "kill.sqlite");
	const machines = [{ name: "demo", url: sim.url, token: sim.token }];
	let server: ServerProcess = await startServerProcess({
		dir,
		machines,
		statePath,
	});
	let client = await connectClient(server.mcpUrl);
	await untilMachinesOnline(client);
	const d = await callTool<{
		thread_id: string;
		run_id: string;
		run_status: string;
	}>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt: "survive a crash",
	});
	expect(d.data.run_status).toBe("preparing");
	await server.kill("SIGKILL");
	await client.close().catch(() => {});
	server = await startServerProcess({ dir, machines, statePath });
	try {
		client = await connectClient(server.mcpUrl);
		const w = await callTool<{
			outcome: string;
			run_id: string;
			message: string;
		}>(client, "t3_wait", {
			thread_id: d.data.thread_id,
			timeout: 30,
		});
		expect(w.data).toMatchObject({
			outcome: "completed",
			run_id: d.data.run_id,
			message: "Hello from the T3 simulator. You said: survive a crash",
		});
		await client.close();
	} finally {
		expect(await server.kill("SIGTERM")).toBe(0);
	}
});
