/**
 * The sim's parallel-work surface at the protocol level (RELEASED-0.1.md §3): launchThread's
 * workspaceStrategy (worktree from a base ref, existing_worktree, root), preparation failures and
 * `prepared-run.retry`, `thread.fork` source points, `generateTitle`, and the pre-release
 * engine dying on the commands it lacks.
 */
import { afterEach, describe, expect, it } from "bun:test";
import {
	dispatchCommand,
	launchPayload,
	type RawClient,
	runEnded,
	startSimWithClient,
	until,
} from "../test-client.ts";
import type { Sim } from "../types.ts";

let sim: Sim | undefined;
let c: RawClient | undefined;
afterEach(async () => {
	c?.close();
	await sim?.stop();
});

async function start(compat: "current" | "prerelease" = "current") {
	const started = await startSimWithClient({
		stepMs: 2,
		coalesceMs: 2,
		compat,
	});
	sim = started.sim;
	c = started.client;
	return started;
}

type Projection = {
	thread: Record<string, unknown>;
	runs: { id: string; status: string }[];
};
const projection = (id: string) => sim?.projection(id) as Projection;

async function launched(
	client: RawClient,
	projectId: string,
	text: string,
	extra: Record<string, unknown> = {},
) {
	const payload = launchPayload(projectId, text, extra);
	const exit = await client.call("orchestration.launchThread", payload);
	return { exit, threadId: payload.threadId };
}

async function settled(client: RawClient, threadId: string, status: string) {
	const stream = client.stream("orchestration.subscribeThread", {
		threadId,
		afterSequence: 0,
	});
	const runId = `run:thread:${threadId}:ordinal:1`;
	await stream.waitFor(runEnded(runId, status), 3000);
	return runId;
}

describe("workspaceStrategy", () => {
	it("worktree: its own branch and path once prepared; existing_worktree joins it; an unknown one fails the launch", async () => {
		const { client, projectId } = await start();
		const { exit, threadId } = await launched(
			client,
			projectId,
			"edit a file",
			{
				workspaceStrategy: {
					type: "worktree",
					baseRef: "HEAD",
					branch: "topic/x",
				},
			},
		);
		expect(exit._tag).toBe("Success");
		expect(exit.value.projection.thread.worktreePath).toBeNull();
		await settled(client, threadId, "completed");
		const thread = projection(threadId).thread;
		expect(thread.branch).toBe("topic/x");
		expect(thread.worktreePath).toBe("/srv/t3/demo.worktrees/topic-x");

		const joined = await launched(client, projectId, "git status", {
			workspaceStrategy: {
				type: "existing_worktree",
				worktreePath: "/srv/t3/demo.worktrees/topic-x",
			},
		});
		expect(joined.exit._tag).toBe("Success");
		expect(joined.exit.value.projection.thread).toMatchObject({
			branch: "topic/x",
			worktreePath: "/srv/t3/demo.worktrees/topic-x",
		});

		const unknown = await launched(client, projectId, "hi", {
			workspaceStrategy: { type: "existing_worktree", worktreePath: "/nope" },
		});
		expect(unknown.exit._tag).toBe("Failure");
		expect(JSON.stringify(unknown.exit)).toContain(
			"Worktree /nope is not a worktree of project",
		);
		expect(sim?.threadIds()).not.toContain(unknown.threadId);
	});

	it("an unknown base ref fails preparing; prepared-run.retry runs the same run once the ref exists", async () => {
		const { client, projectId } = await start();
		const { threadId } = await launched(client, projectId, "say hi", {
			workspaceStrategy: { type: "worktree", baseRef: "later" },
		});
		const runId = await settled(client, threadId, "failed");
		const again = await dispatchCommand(
			client,
			"prepared-run.retry",
			threadId,
			{
				runId,
			},
		);
		// Still unknown: fails again, and can be retried again.
		expect(again._tag).toBe("Success");
		await until(
			() => projection(threadId).runs[0]?.status === "failed",
			3000,
			"the second failure",
		);
		const maker = await launched(client, projectId, "say hi", {
			workspaceStrategy: { type: "worktree", baseRef: "main", branch: "later" },
		});
		await settled(client, maker.threadId, "completed");
		const retried = await dispatchCommand(
			client,
			"prepared-run.retry",
			threadId,
			{
				runId,
			},
		);
		expect(retried._tag).toBe("Success");
		await until(
			() => projection(threadId).runs[0]?.status === "completed",
			3000,
			"the retried run",
		);
		expect(projection(threadId).runs).toHaveLength(1);
		const twice = await dispatchCommand(
			client,
			"prepared-run.retry",
			threadId,
			{
				runId,
			},
		);
		expect(JSON.stringify(twice)).toContain(
			"has no failed workspace preparation",
		);
	});
});

describe("thread.fork and generateTitle", () => {
	it("forks from a settled run; refuses a missing run; the fork carries lineage", async () => {
		const { client, projectId } = await start();
		const { threadId } = await launched(client, projectId, "say hi");
		const runId = await settled(client, threadId, "completed");
		const target = `thread-${crypto.randomUUID()}`;
		const base = {
			createdBy: "user",
			creationSource: "mcp",
			sourceThreadId: threadId,
		};
		const missing = await client.call("orchestration.dispatchCommand", {
			type: "thread.fork",
			commandId: crypto.randomUUID(),
			...base,
			targetThreadId: target,
			sourcePoint: { type: "run", runId: "run:none" },
		});
		expect(JSON.stringify(missing)).toContain("Run run:none was not found");
		const ok = await client.call("orchestration.dispatchCommand", {
			type: "thread.fork",
			commandId: crypto.randomUUID(),
			...base,
			targetThreadId: target,
			sourcePoint: { type: "run", runId },
		});
		expect(ok._tag).toBe("Success");
		expect(projection(target).thread).toMatchObject({
			lineage: { parentThreadId: threadId, relationshipToParent: "fork" },
			forkedFrom: { threadId, runId },
		});
		expect(projection(target).runs).toEqual([]);
	});

	it("generateTitle replaces the title; the pre-release keeps it and dies on thread.fork and prepared-run.retry", async () => {
		const { client, projectId } = await start();
		const { threadId } = await launched(
			client,
			projectId,
			"tidy the greet function.",
			{
				generateTitle: true,
			},
		);
		await until(
			() => projection(threadId).thread.title === "tidy the greet function",
		);
		c?.close();
		await sim?.stop();

		const old = await start("prerelease");
		const plain = await launched(old.client, old.projectId, "tidy it.", {
			generateTitle: true,
		});
		await settled(old.client, plain.threadId, "completed");
		expect(projection(plain.threadId).thread.title).toBe("sim test");
		for (const type of ["thread.fork", "prepared-run.retry"]) {
			const exit = await dispatchCommand(old.client, type, plain.threadId, {
				runId: "r",
				createdBy: "user",
				creationSource: "mcp",
				sourceThreadId: plain.threadId,
				targetThreadId: "t2",
				sourcePoint: { type: "latest_stable" },
			});
			expect([type, exit._tag]).toEqual([type, "Failure"]);
			expect(JSON.stringify(exit)).toContain("Expected");
		}
	});
});
