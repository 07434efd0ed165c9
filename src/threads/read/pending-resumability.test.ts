import { describe, expect, test } from "bun:test";
import type { Machine } from "../../t3/machine-api.ts";
import type { ThreadShell } from "../../t3/model.ts";
import {
	applyKnownToolCalls,
	learnPendingToolCalls,
	listedState,
} from "./pending-resumability.ts";
import { buildListing, inState } from "./thread-index.ts";

const shell = (id: string, patch: Partial<ThreadShell> = {}): ThreadShell => ({
	id,
	projectId: "p",
	title: id,
	latestRunId: "run",
	activeRunId: "run",
	status: "waiting",
	pendingRuntimeRequest: { id: `req-${id}`, kind: "dynamic_tool_call" },
	latestVisibleMessage: null,
	updatedAt: "2026-12-01T00:00:00.000Z",
	...patch,
});

/** A machine whose projections hold one request per thread with the given capability. */
function fakeMachine(capability: Record<string, string | Error>) {
	const reads: string[] = [];
	const machine = {
		async getThread(threadId: string) {
			reads.push(threadId);
			const type = capability[threadId];
			if (type instanceof Error) throw type;
			return {
				projection: {
					runtimeRequests: [
						{
							id: `req-${threadId}`,
							kind: "dynamic_tool_call",
							status: "pending",
							responseCapability: { type, reason: "restart" },
						},
					],
				},
			};
		},
	} as unknown as Machine;
	return { machine, reads };
}

const all = () => true;

describe("a pending client tool call in t3_threads", () => {
	test("not resumable → attention, live → active; each request read once, the state filter agrees", async () => {
		const { machine, reads } = fakeMachine({
			stuck: "not_resumable",
			live: "live",
		});
		const stuck = shell("stuck");
		const live = shell("live");
		const other = shell("other", {
			pendingRuntimeRequest: { id: "q", kind: "user_input" },
		});
		const list = buildListing([stuck, live, other]);
		// Unknown yet: what the shell alone says.
		expect(listedState(machine, stuck)).toBe("active");
		await learnPendingToolCalls(machine, list, all);
		expect(reads.sort()).toEqual(["live", "stuck"]);
		expect(listedState(machine, stuck)).toBe("attention");
		expect(listedState(machine, live)).toBe("active");
		applyKnownToolCalls(machine, list);
		const ids = (state: "attention" | "active") =>
			[...inState(list, state)].map((i) => list.threads[i]?.id).sort();
		expect(ids("attention")).toEqual(["other", "stuck"]);
		expect(ids("active")).toEqual(["live"]);
		// Listing again reads nothing.
		await learnPendingToolCalls(machine, buildListing([stuck, live]), all);
		expect(reads).toHaveLength(2);
	});

	test("a resumable answer is read again once the shell changes; a failed read stays active and is retried", async () => {
		const capability: Record<string, string | Error> = {
			t: "live",
			broken: new Error("offline"),
		};
		const { machine, reads } = fakeMachine(capability);
		const t = shell("t");
		const broken = shell("broken");
		await learnPendingToolCalls(machine, buildListing([t, broken]), all);
		expect(listedState(machine, broken)).toBe("active");
		// T3 restarted: the same request is now not resumable, and the thread's shell changed.
		capability.t = "not_resumable";
		const later = shell("t", { updatedAt: "2026-12-01T00:01:00.000Z" });
		await learnPendingToolCalls(machine, buildListing([later, broken]), all);
		expect(reads.sort()).toEqual(["broken", "broken", "t", "t"]);
		expect(listedState(machine, later)).toBe("attention");
	});

	test("threads the listing may not show are not read", async () => {
		const { machine, reads } = fakeMachine({ hidden: "not_resumable" });
		await learnPendingToolCalls(
			machine,
			buildListing([shell("hidden", { projectId: "h" })]),
			(thread) => thread.projectId !== "h",
		);
		expect(reads).toEqual([]);
	});
});
