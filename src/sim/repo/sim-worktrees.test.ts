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

/**
 * Each change of the thread's branch (or its worktree appearing) up to its first run's end, with
 * the event that told it: [type, branch, has a worktree].
 */
async function branchHistory(client: RawClient, threadId: string) {
	const stream = client.stream("orchestration.subscribeThread", {
		threadId,
		afterSequence: 0,
	});
	await stream.waitFor(
		runEnded(`run:thread:${threadId}:ordinal:1`, "completed"),
		3000,
	);
	const changes: [string, unknown, boolean][] = [];
	for (const i of stream.items) {
		if (i.kind !== "event" || !i.event.type.startsWith("thread.")) continue;
		const { branch, worktreePath } = i.event.payload;
		const last = changes.at(-1);
		if (!last || last[1] !== branch || last[2] !== (worktreePath !== null))
			changes.push([i.event.type, branch, worktreePath !== null]);
	}
	return changes;
}

describe("temporary worktree branches (ThreadLaunchService, idx 59486431798)", () => {
	it("a t3code/<8 hex> name (sent as T3's app does, or made by the server) is renamed after provisioning; a chosen name is kept", async () => {
		const { client, projectId } = await start();
		const temporary = "t3code/0123abcd";
		const sent = await launched(client, projectId, "edit a file", {
			workspaceStrategy: {
				type: "worktree",
				baseRef: "HEAD",
				branch: temporary,
			},
		});
		// Created on the sent name, provisioned under it, then renamed in the background.
		expect(sent.exit.value.projection.thread.branch).toBe(temporary);
		expect(await branchHistory(client, sent.threadId)).toEqual([
			["thread.created", temporary, false],
			["thread.metadata-updated", temporary, true],
			["thread.metadata-updated", "edit-a-file", true],
		]);
		expect(projection(sent.threadId).thread).toMatchObject({
			branch: "edit-a-file",
			// git branch -m leaves the worktree where it is.
			worktreePath: "/srv/t3/demo.worktrees/t3code-0123abcd",
		});

		// No branch: the server's own temporary name; the generated one is taken, so `-1`.
		const made = await launched(client, projectId, "edit a file", {
			workspaceStrategy: { type: "worktree", baseRef: "HEAD" },
		});
		expect(made.exit.value.projection.thread.branch).toBeNull();
		const history = await branchHistory(client, made.threadId);
		expect(history[1]?.[1]).toMatch(/^t3code\/[0-9a-f]{8}$/);
		expect(history.at(-1)).toEqual([
			"thread.metadata-updated",
			"edit-a-file-1",
			true,
		]);

		// The renamed branch exists in the repository: it cannot be made again.
		const taken = await launched(client, projectId, "say hi", {
			workspaceStrategy: {
				type: "worktree",
				baseRef: "HEAD",
				branch: "edit-a-file",
			},
		});
		await settled(client, taken.threadId, "failed");

		const chosen = await launched(client, projectId, "edit a file", {
			workspaceStrategy: {
				type: "worktree",
				baseRef: "HEAD",
				branch: "topic/kept",
			},
		});
		expect(await branchHistory(client, chosen.threadId)).toEqual([
			["thread.created", "topic/kept", false],
			["thread.metadata-updated", "topic/kept", true],
		]);
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
		// T3's texts (idx 70105834407, 69176170854).
		expect(JSON.stringify(missing)).toContain(
			"No stable source run was found for fork source run.",
		);
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
			forkedFrom: { type: "run", threadId, runId },
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
