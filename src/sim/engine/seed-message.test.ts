/** `sim.seedMessage`: a thread with a history without a run, shown as T3's shell shows it. */
import { describe, expect, it } from "bun:test";
import { launchPayload, startSimWithClient } from "../test-client.ts";
import type { Sim } from "../types.ts";

async function shellOf(sim: Sim, threadId: string) {
	const res = await fetch(`${sim.url}/api/orchestration/shell`, {
		headers: {
			authorization: `Bearer ${sim.token}`,
			"x-t3-orchestration-protocol": "2",
		},
	});
	const body = (await res.json()) as { threads: Record<string, unknown>[] };
	return body.threads.find((t) => t.id === threadId);
}

describe("sim seedMessage", () => {
	it("becomes the shell's latest visible message, or stays out where T3 sends none", async () => {
		for (const shellWithoutMessages of [false, true]) {
			const { sim, client, projectId } = await startSimWithClient({
				stepMs: 2,
				shellWithoutMessages,
			});
			try {
				// Launched without a first message: no run, no message yet.
				const { initialMessage: _, ...idle } = launchPayload(projectId, "x");
				const exit = await client.call("orchestration.launchThread", idle);
				expect(exit._tag).toBe("Success");
				expect(() =>
					sim.seedMessage("no-such-thread", { role: "user", text: "x" }),
				).toThrow("no active thread");
				const text = "a reply ".repeat(300);
				sim.seedMessage(idle.threadId, { role: "assistant", text });
				const shell = await shellOf(sim, idle.threadId);
				expect(shell?.latestVisibleMessage ?? null).toEqual(
					shellWithoutMessages
						? null
						: expect.objectContaining({ role: "assistant", text }),
				);
			} finally {
				client.close();
				await sim.stop();
			}
		}
	});
});
