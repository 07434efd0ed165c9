/** `sim.seedMessage`: a thread with a history without a run, shown as T3's shell shows it. */
import { afterEach, describe, expect, it } from "bun:test";
import {
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
});

async function shellOf(s: Sim, threadId: string) {
	const res = await fetch(`${s.url}/api/orchestration/shell`, {
		headers: {
			authorization: `Bearer ${s.token}`,
			"x-t3-orchestration-protocol": "2",
		},
	});
	const body = (await res.json()) as { threads: Record<string, unknown>[] };
	return body.threads.find((t) => t.id === threadId);
}

describe("sim seedMessage", () => {
	it("becomes the shell's latest visible message, or stays out where T3 sends none", async () => {
		for (const shellWithoutMessages of [false, true]) {
			const started = await startSimWithClient({
				stepMs: 2,
				shellWithoutMessages,
			});
			sim = started.sim;
			c = started.client;
			// Launched without a first message: no run, no message yet.
			const { initialMessage: _, ...idle } = launchPayload(
				started.projectId,
				"x",
			);
			const { threadId } = idle;
			const exit = await c.call("orchestration.launchThread", idle);
			expect(exit._tag).toBe("Success");
			expect(() =>
				sim?.seedMessage("no-such-thread", { role: "user", text: "x" }),
			).toThrow("no active thread");
			const text = "a reply ".repeat(300);
			sim.seedMessage(threadId, { role: "assistant", text });
			const shell = await shellOf(sim, threadId);
			expect(shell?.latestVisibleMessage ?? null).toEqual(
				shellWithoutMessages
					? null
					: expect.objectContaining({ role: "assistant", text }),
			);
			c.close();
			await sim.stop();
			sim = undefined;
			c = undefined;
		}
	});
});
