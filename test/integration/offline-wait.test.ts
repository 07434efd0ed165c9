/**
 * A `t3_wait` that times out while the thread's machine is offline says so (issue 16): which
 * machine, since when and why, not a bare timeout.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilRunning,
} from "../helpers/stack.ts";

let stack: Stack;
beforeAll(async () => {
	stack = await startStack();
});
afterAll(async () => {
	await stack.stop();
});

test("a wait that times out on an offline machine names the machine, since when and why", async () => {
	const client = await stack.client();
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt: "long task",
	});
	await untilRunning(client, d.data.thread_id);
	// Online: a timeout is the usual one.
	const online = await callTool<{ outcome: string }>(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 0,
	});
	expect(online.data.outcome).toBe("timeout");
	expect(online.text).not.toContain("offline");
	expect(online.data).not.toHaveProperty("machine_state");

	const before = Date.now();
	await stack.sim().stop();
	await until(
		() =>
			stack.server.services.fleet.get("demo")?.machine.status().state ===
			"offline",
		15_000,
		"demo offline",
	);
	const w = await callTool<{
		outcome: string;
		machine_state?: string;
		reason?: string | null;
	}>(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 0,
	});
	expect(w.isError).toBe(false);
	expect(w.data.outcome).toBe("timeout");
	// Said in the result too (CONTRACT.md "Trust round three"), not only in the note.
	expect(w.data.machine_state).toBe("offline");
	expect(w.data.reason).toContain("demo");
	const match =
		/Timed out waiting while machine "demo" is offline since (\S+) \(\d+ s ago\): (.+)\. The run may still be going there/.exec(
			w.text,
		);
	expect(match, w.text).not.toBeNull();
	const since = Date.parse(match?.[1] ?? "");
	expect(since).toBeGreaterThanOrEqual(before - 1_000);
	expect(since).toBeLessThanOrEqual(Date.now());
	expect(match?.[2]).toContain("demo");
	expect(w.text).not.toContain("Call t3_wait again to keep waiting.");
});
