/**
 * Parallel work in one repository (issue 18, MCP client → server → sims over real sockets):
 * threads in their own git worktrees, a failed preparation and its retry, forks, generated
 * titles, linked pull requests, and the pre-release engine that lacks some of it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	launchOnSim,
	type Stack,
	startStack,
	until,
} from "../helpers/stack.ts";

type Dispatched = {
	thread_id: string;
	run_id: string | null;
	branch: string | null;
	worktree_path: string | null;
	branch_temporary: boolean;
	forked_from: string | null;
};
type Read = {
	title: string;
	status: string;
	branch: string | null;
	worktree_path: string | null;
	branch_temporary: boolean;
	forked_from: { thread_id: string; run_id: string | null } | null;
	inherited: { messages: { role: string; text: string }[] } | null;
	pull_requests: {
		number: number | null;
		url: string | null;
		state: string | null;
		title: string | null;
	}[];
	latest_run: {
		status: string;
		error: string | null;
		error_class: string | null;
	};
	runs: { id: string; messages: { role: string; text: string }[] }[];
};
type Wait = {
	outcome: string;
	error: string | null;
	error_class: string | null;
};

let stack: Stack;
let client: Client;
let receiver: Receiver;
beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
		machines: [
			{
				name: "demo",
				sim: {
					projects: [
						{ title: "demo", workspaceRoot: "/srv/t3/demo" },
						{
							title: "wt",
							workspaceRoot: "/srv/t3/wt",
							defaultThreadEnvMode: "worktree",
						},
						{ title: "secret", workspaceRoot: "/srv/t3/secret" },
					],
				},
				projects: ["demo", "wt"],
			},
			{ name: "old", sim: { compat: "prerelease" } },
		],
	});
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

async function dispatch(args: Record<string, unknown>): Promise<Dispatched> {
	const d = await callTool<Dispatched>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		...args,
	});
	expect([d.isError, d.text]).toEqual([false, expect.any(String)]);
	return d.data;
}

async function wait(threadId: string): Promise<Wait> {
	const w = await callTool<Wait>(client, "t3_wait", {
		thread_id: threadId,
		timeout: 20,
	});
	expect(w.isError).toBe(false);
	return w.data;
}

async function read(threadId: string, turns = 1): Promise<Read> {
	const r = await callTool<Read>(client, "t3_thread", {
		thread_id: threadId,
		turns,
	});
	expect(r.isError).toBe(false);
	return r.data;
}

const lastMessage = (r: Read) => r.runs.at(-1)?.messages.at(-1)?.text ?? "";

describe("worktrees", () => {
	test("t3_projects shows each project's default workspace", async () => {
		const p = await callTool<{
			projects: { title: string; default_workspace: string }[];
		}>(client, "t3_projects", { machine: "demo" });
		expect(
			Object.fromEntries(
				p.data.projects.map((x) => [x.title, x.default_workspace]),
			),
		).toEqual({ demo: "root", wt: "worktree" });
	});

	test("three threads edit the same file at once, each in its own worktree: each diff shows only its own change, the root checkout none", async () => {
		const branches = ["feature/a", "feature/b", "feature/c"];
		const started = await Promise.all(
			branches.map((branch) =>
				dispatch({ prompt: "edit a file", workspace: "worktree", branch }),
			),
		);
		expect(started.map((d) => d.branch)).toEqual(branches);
		for (const d of started) expect(d.forked_from).toBeNull();
		const outcomes = await Promise.all(started.map((d) => wait(d.thread_id)));
		expect(outcomes.map((o) => o.outcome)).toEqual([
			"completed",
			"completed",
			"completed",
		]);
		const paths = new Set<string>();
		for (const [i, d] of started.entries()) {
			const r = await read(d.thread_id);
			expect(r.branch).toBe(branches[i] as string);
			expect(r.worktree_path).toEqual(expect.stringContaining("feature-"));
			paths.add(r.worktree_path as string);
			const diff = await callTool<{ diff: string; files: unknown[] }>(
				client,
				"t3_diff",
				{ thread_id: d.thread_id },
			);
			expect(diff.isError).toBe(false);
			expect(diff.data.files).toEqual([
				{ path: "src/app.ts", additions: 3, deletions: 1 },
			]);
			expect(diff.data.diff).toContain(
				`+src/app.ts line 1 written by run 1 on ${branches[i]}\n`,
			);
			for (const other of branches.filter((b) => b !== branches[i]))
				expect(diff.data.diff).not.toContain(`on ${other}`);
		}
		expect(paths.size).toBe(3);
		// Events carry the thread's branch and worktree.
		const first = started[0] as Dispatched;
		const eventOf = () =>
			receiver.deliveries.find(
				(x) =>
					x.body.thread_id === first.thread_id &&
					x.body.type === "thread.completed",
			)?.body;
		await until(() => eventOf() !== undefined, 10_000, "the completed event");
		expect(eventOf()).toMatchObject({ branch: "feature/a" });
		expect(eventOf()?.worktree_path).toEqual(
			expect.stringContaining("feature-a"),
		);
		const listed = await callTool<{
			threads: {
				thread_id: string;
				branch: string | null;
				worktree_path: string | null;
			}[];
		}>(client, "t3_threads", { machine: "demo", project: "demo" });
		const row = listed.data.threads.find(
			(t) => t.thread_id === started[0]?.thread_id,
		);
		expect(row).toMatchObject({ branch: "feature/a" });
		expect(row?.worktree_path).toEqual(expect.stringContaining("feature-a"));

		// The root checkout: untouched.
		const root = await dispatch({ prompt: "git status" });
		expect(root.worktree_path).toBeNull();
		await wait(root.thread_id);
		const status = await read(root.thread_id);
		expect(status.worktree_path).toBeNull();
		expect(lastMessage(status)).toBe(
			"On branch main. Nothing to commit, working tree clean.",
		);

		// Another thread in an existing worktree sees that worktree's edit.
		const joined = await dispatch({
			prompt: "git status",
			worktree_path: [...paths][0],
		});
		await wait(joined.thread_id);
		expect(lastMessage(await read(joined.thread_id))).toMatch(
			/^On branch feature\/[abc]\. Changed: src\/app\.ts\.$/,
		);
	});

	test("without workspace a new thread follows the project's default; a continuation stays where it is", async () => {
		const d = await dispatch({ project: "wt", prompt: "say hello" });
		expect(d.branch_temporary).toBe(true);
		await wait(d.thread_id);
		const r = await read(d.thread_id);
		// T3 renamed the temporary branch after the launch (before: it stayed t3code/…).
		expect(r.branch).toEqual(expect.stringMatching(/^say-hello(-\d+)?$/));
		expect(r.worktree_path).toEqual(expect.stringContaining("/srv/t3/wt"));
		const again = await callTool(client, "t3_dispatch", {
			thread_id: d.thread_id,
			prompt: "more",
			workspace: "root",
		});
		expect(again.isError).toBe(true);
		expect(again.text).toContain(
			"workspace: a continuation runs where its thread is",
		);
		const root = await dispatch({
			project: "wt",
			prompt: "say hello",
			workspace: "root",
		});
		await wait(root.thread_id);
		expect((await read(root.thread_id)).worktree_path).toBeNull();
	});

	test("without branch a worktree thread gets T3's temporary t3code/<8 hex> name, as T3's app sends; after its first turn T3 has renamed it", async () => {
		const sim = stack.sim("demo");
		sim.record(true);
		const d = await dispatch({
			prompt: "tidy the readme",
			workspace: "worktree",
		});
		sim.record(false);
		const temporary = d.branch as string;
		expect(temporary).toMatch(/^t3code\/[0-9a-f]{8}$/);
		expect(d).toMatchObject({ branch_temporary: true, worktree_path: null });
		// The name went out in launchThread's workspaceStrategy (idx 53147870045, 70174805780).
		const sent = sim
			.frames()
			.map(
				(f) => f.frame as { tag?: string; payload?: Record<string, unknown> },
			)
			.find(
				(f) =>
					f.tag === "orchestration.launchThread" &&
					f.payload?.threadId === d.thread_id,
			);
		expect(sent?.payload?.workspaceStrategy).toEqual({
			type: "worktree",
			baseRef: "HEAD",
			branch: temporary,
		});
		expect((await wait(d.thread_id)).outcome).toBe("completed");
		const r = await read(d.thread_id);
		expect(r).toMatchObject({
			branch: "tidy-the-readme",
			branch_temporary: false,
			forked_from: null,
			inherited: null,
		});
		// git branch -m leaves the worktree where the temporary name put it.
		expect(r.worktree_path).toContain(
			`t3code-${temporary.slice("t3code/".length)}`,
		);
		// A name the caller chose is final.
		const named = await dispatch({
			prompt: "tidy the readme",
			workspace: "worktree",
			branch: "docs/readme",
		});
		expect(named).toMatchObject({
			branch: "docs/readme",
			branch_temporary: false,
		});
		await wait(named.thread_id);
		expect((await read(named.thread_id)).branch).toBe("docs/readme");
		// So is a caller's name of T3's temporary shape: only the connector's own is temporary.
		const lookalike = await dispatch({
			prompt: "say hello",
			workspace: "worktree",
			branch: "t3code/deadbeef",
		});
		expect(lookalike).toMatchObject({
			branch: "t3code/deadbeef",
			branch_temporary: false,
		});
		await wait(lookalike.thread_id);
		// T3 renames any name of that shape after the turn; it was never ours to call temporary.
		expect((await read(lookalike.thread_id)).branch_temporary).toBe(false);
	});

	test("bad ref names, unknown worktrees and misplaced arguments are refused by name, nothing sent", async () => {
		const before = stack.sim("demo").threadIds().length;
		for (const [args, text] of [
			[{ base_ref: "-rf" }, 'base_ref: "-rf" is not a valid git ref name'],
			[{ base_ref: "a..b" }, 'base_ref: "a..b" is not a valid git ref name'],
			[
				{ branch: "topic.lock" },
				'branch: "topic.lock" is not a valid git ref name',
			],
			[
				{ branch: "HEAD" },
				'branch: "HEAD" is not a valid git ref name: HEAD is not a branch name',
			],
			[
				{ branch: "has space" },
				'branch: "has space" is not a valid git ref name',
			],
			[{ branch: "x".repeat(201) }, "branch"],
			[
				{ worktree_path: "/tmp/elsewhere" },
				'worktree_path: "/tmp/elsewhere" is not a worktree T3 reports',
			],
			[
				{ workspace: "root", branch: "topic" },
				'branch: only used with workspace "worktree"',
			],
			[{ fork_run_id: "run:x" }, "fork_run_id: only used with fork_of"],
		] as const) {
			const r = await callTool(client, "t3_dispatch", {
				machine: "demo",
				project: "demo",
				prompt: "say hello",
				workspace: "worktree",
				...args,
			});
			expect([r.isError, r.text]).toEqual([
				true,
				expect.stringContaining(text),
			]);
		}
		expect(stack.sim("demo").threadIds().length).toBe(before);
	});

	test("a bad base_ref fails preparing with T3's reason; after the ref exists, retry_preparation runs it", async () => {
		const d = await dispatch({
			prompt: "edit a file",
			workspace: "worktree",
			base_ref: "release/next",
		});
		const failed = await wait(d.thread_id);
		expect(failed).toMatchObject({
			outcome: "failed",
			error_class: "workspace_preparation",
		});
		expect(failed.error).toContain("invalid reference: release/next");
		const none = await read(d.thread_id);
		expect(none.worktree_path).toBeNull();

		// Another thread creates the branch; then the retry finds it.
		const maker = await dispatch({
			prompt: "say hello",
			workspace: "worktree",
			branch: "release/next",
		});
		await wait(maker.thread_id);
		// A branch that exists already cannot be made again.
		const taken = await dispatch({
			prompt: "say hello",
			workspace: "worktree",
			branch: "release/next",
		});
		const refused = await wait(taken.thread_id);
		expect(refused).toMatchObject({
			outcome: "failed",
			error_class: "workspace_preparation",
		});
		expect(refused.error).toContain(
			"a branch named 'release/next' already exists",
		);
		const retried = await callTool<{ action: string }>(client, "t3_manage", {
			thread_id: d.thread_id,
			action: "retry_preparation",
		});
		expect([retried.isError, retried.text]).toEqual([
			false,
			expect.any(String),
		]);
		expect((await wait(d.thread_id)).outcome).toBe("completed");
		// Events: the failure, then the retried run's completion.
		const types = () =>
			receiver.deliveries
				.filter((x) => x.body.thread_id === d.thread_id)
				.map((x) => [x.body.type, x.body.error_class]);
		await until(() => types().length === 2, 10_000, "both events");
		expect(types()).toEqual([
			["thread.failed", "workspace_preparation"],
			["thread.completed", null],
		]);
		const r = await read(d.thread_id);
		expect(r.latest_run.status).toBe("completed");
		expect(r.worktree_path).toEqual(expect.stringContaining("t3code-"));

		const nothing = await callTool(client, "t3_manage", {
			thread_id: d.thread_id,
			action: "retry_preparation",
		});
		expect(nothing.isError).toBe(true);
		expect(nothing.text).toContain("run_id: no run of thread");
	});
});

describe("titles, forks and pull requests", () => {
	test("without title T3 generates one; with a title it is kept", async () => {
		const d = await dispatch({ prompt: "fix the flaky test, please." });
		await wait(d.thread_id);
		expect((await read(d.thread_id)).title).toBe("fix the flaky test, please");
		const named = await dispatch({ prompt: "say hello", title: "mine" });
		await wait(named.thread_id);
		expect((await read(named.thread_id)).title).toBe("mine");
	});

	test("a fork carries the source conversation and leaves the source alone", async () => {
		const source = await dispatch({ prompt: "the word is pineapple" });
		await wait(source.thread_id);
		const later = await callTool<Dispatched>(client, "t3_dispatch", {
			thread_id: source.thread_id,
			prompt: "the second word is mango",
		});
		await wait(later.data.thread_id);
		const before = await read(source.thread_id, 5);

		const fork = await callTool<Dispatched>(client, "t3_dispatch", {
			fork_of: source.thread_id,
			prompt: "what do you remember",
		});
		expect(fork.isError).toBe(false);
		expect(fork.data.forked_from).toBe(source.thread_id);
		expect(fork.data.thread_id).not.toBe(source.thread_id);
		await wait(fork.data.thread_id);
		const forkRead = await read(fork.data.thread_id, 5);
		const said = lastMessage(forkRead);
		expect(said).toContain("user: the word is pineapple");
		expect(said).toContain("user: the second word is mango");
		// T3 copies no runs into a fork: the source's words are its inherited conversation,
		// up to the latest stable run (idx 69176170854, 70189692800).
		expect(forkRead.runs.map((r) => r.id)).toEqual([
			fork.data.run_id as string,
		]);
		expect(forkRead.forked_from).toEqual({
			thread_id: source.thread_id,
			run_id: before.runs[1]?.id ?? null,
		});
		expect(forkRead.inherited?.messages).toEqual(
			before.runs.flatMap((r) =>
				r.messages.map((m) => ({ role: m.role, text: m.text })),
			),
		);
		expect(forkRead.inherited?.messages.slice(0, 1)).toEqual([
			{ role: "user", text: "the word is pineapple" },
		]);
		// Capped like messages: the default one turn shows the last inherited run's.
		expect(
			(await read(fork.data.thread_id)).inherited?.messages.map((m) => m.text),
		).toEqual(before.runs[1]?.messages.map((m) => m.text));

		// From the first run only.
		const early = await callTool<Dispatched>(client, "t3_dispatch", {
			fork_of: source.thread_id,
			fork_run_id: before.runs[0]?.id,
			prompt: "what do you remember",
		});
		expect(early.isError).toBe(false);
		await wait(early.data.thread_id);
		const earlyRead = await read(early.data.thread_id, 5);
		const earlySaid = lastMessage(earlyRead);
		expect(earlySaid).toContain("pineapple");
		expect(earlySaid).not.toContain("mango");
		expect(earlyRead.forked_from).toEqual({
			thread_id: source.thread_id,
			run_id: before.runs[0]?.id ?? null,
		});
		const earlyWords = earlyRead.inherited?.messages.map((m) => m.text);
		expect(earlyWords).toContain("the word is pineapple");
		expect(earlyWords?.join(" ")).not.toContain("mango");

		expect(await read(source.thread_id, 5)).toEqual(before);
		expect(before).toMatchObject({ forked_from: null, inherited: null });

		// A keyed fork replays: the same fork, no second one.
		const keyed = {
			fork_of: source.thread_id,
			prompt: "say hello",
			idempotency_key: "fork-once",
		};
		const once = await callTool<Dispatched>(client, "t3_dispatch", keyed);
		const twice = await callTool<Dispatched>(client, "t3_dispatch", keyed);
		expect(once.isError).toBe(false);
		expect(twice.data).toMatchObject({
			thread_id: once.data.thread_id,
			run_id: once.data.run_id,
			forked_from: source.thread_id,
		});

		const badRun = await callTool(client, "t3_dispatch", {
			fork_of: source.thread_id,
			fork_run_id: "run:nope",
			prompt: "x",
		});
		expect([badRun.isError, badRun.text]).toEqual([
			true,
			expect.stringContaining('fork_run_id: machine "demo" refused'),
		]);
	});

	test("hidden and unknown fork sources are not found", async () => {
		const hidden = await launchOnSim(stack.sim("demo"), "secret", "hi");
		const unknown = await callTool(client, "t3_dispatch", {
			fork_of: "no-such-thread",
			prompt: "x",
		});
		const secret = await callTool(client, "t3_dispatch", {
			fork_of: hidden,
			prompt: "x",
		});
		expect(unknown.isError).toBe(true);
		expect(secret.isError).toBe(true);
		expect(secret.text.replaceAll(hidden, "no-such-thread")).toBe(unknown.text);
	});

	test("pull requests T3 links to the thread appear in t3_thread", async () => {
		const d = await dispatch({
			prompt: "open a pull request titled Fix the flaky test",
			workspace: "worktree",
			branch: "fix/flaky",
		});
		expect(await wait(d.thread_id)).toMatchObject({ outcome: "completed" });
		const r = await read(d.thread_id);
		expect(r.pull_requests).toEqual([
			{
				number: expect.any(Number),
				url: expect.stringMatching(
					/^https:\/\/github\.com\/example\/demo\/pull\/\d+$/,
				),
				state: "open",
				title: "Fix the flaky test",
			},
		]);
		const plain = await dispatch({ prompt: "say hello" });
		await wait(plain.thread_id);
		expect((await read(plain.thread_id)).pull_requests).toEqual([]);
	});
});

describe("against the pre-release engine", () => {
	test("fork and retry_preparation: a clear 'does not support', never a crash; titles stay the prompt prefix", async () => {
		const d = await dispatch({
			machine: "old",
			prompt: "fix the flaky test, please.",
		});
		await wait(d.thread_id);
		expect((await read(d.thread_id)).title).toBe("fix the flaky test, please.");
		const fork = await callTool(client, "t3_dispatch", {
			fork_of: d.thread_id,
			prompt: "what do you remember",
		});
		expect(fork.isError).toBe(true);
		expect(fork.text).toContain(
			'fork_of: this T3 server (machine "old") does not support forking threads',
		);
		const bad = await dispatch({
			machine: "old",
			prompt: "say hello",
			workspace: "worktree",
			base_ref: "nope",
		});
		expect((await wait(bad.thread_id)).outcome).toBe("failed");
		const retry = await callTool(client, "t3_manage", {
			thread_id: bad.thread_id,
			action: "retry_preparation",
		});
		expect(retry.isError).toBe(true);
		expect(retry.text).toContain(
			'this T3 server (machine "old") does not support retrying a workspace preparation',
		);
		// Still answering.
		expect((await read(d.thread_id)).status).toBe("completed");
		// A worktree without a branch works there too: the temporary name is sent as T3's app
		// does (older servers fail a launch they cannot name a branch for).
		const worktree = await dispatch({
			machine: "old",
			prompt: "say hello",
			workspace: "worktree",
		});
		expect(worktree.branch).toMatch(/^t3code\/[0-9a-f]{8}$/);
		expect((await wait(worktree.thread_id)).outcome).toBe("completed");
	});
});
