/**
 * Finding, organising and reviewing threads end to end (the official MCP client → our server →
 * two simulated machines over real sockets, plus one machine that is down): t3_threads across
 * machines with a hidden project, paging, `unavailable`; t3_manage's lifecycle with T3's
 * refusals and idempotency keys; t3_delete; t3_diff of a run, of the whole thread, paged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { freePort } from "../helpers/process.ts";
import {
	callTool,
	launchOnSim,
	type Stack,
	startStack,
	untilRunning,
} from "../helpers/stack.ts";

type Listed = {
	thread_id: string;
	machine: string;
	project: { title: string };
	title: string;
	status: string;
	state: string;
	pending: string | null;
	latest_run: { id: string; ordinal: number | null; status: string } | null;
	archived: boolean;
	watched: boolean;
};
type ThreadList = {
	threads: Listed[];
	next_cursor: string | null;
	unavailable: { machine: string; state: string; reason: string | null }[];
};
type Managed = {
	thread_id: string;
	action: string;
	status: string;
	title: string;
	archived: boolean;
	pinned: boolean;
	changed: boolean;
	note: string | null;
};
type Diff = {
	thread_id: string;
	run_id: string | null;
	available: boolean;
	reason: string | null;
	files: { path: string; additions: number; deletions: number }[];
	diff: string;
	truncated: boolean;
	next_cursor: string | null;
};

let stack: Stack;
let client: Client;
const ids = { hidden: "", edit: "", hello: "", third: "" };

async function dispatchDone(machine: string, prompt: string) {
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine,
		project: "demo",
		prompt,
	});
	expect(d.isError).toBe(false);
	const w = await callTool<{ outcome: string }>(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 20,
	});
	expect(w.data.outcome).toBe("completed");
	return d.data.thread_id;
}

const list = (args: Record<string, unknown> = {}) =>
	callTool<ThreadList>(client, "t3_threads", args);
const manage = (threadId: string, action: string, extra = {}) =>
	callTool<Managed>(client, "t3_manage", {
		thread_id: threadId,
		action,
		...extra,
	});

beforeAll(async () => {
	stack = await startStack({
		machines: [
			{
				name: "a",
				sim: {
					projects: [
						{ title: "demo", workspaceRoot: "/srv/t3/demo" },
						{ title: "secret", workspaceRoot: "/srv/t3/secret" },
					],
				},
				projects: ["demo"],
			},
			{ name: "b" },
			{ name: "down", url: `http://127.0.0.1:${await freePort()}` },
		],
	});
	client = await stack.client();
	ids.hidden = await launchOnSim(stack.sim("a"), "secret", "hidden work");
	ids.edit = await dispatchDone("a", "edit a file");
	ids.hello = await dispatchDone("b", "say hello to the Zebra");
	ids.third = await dispatchDone("a", "say hi");
});
afterAll(async () => {
	await stack.stop();
});

describe("t3_threads", () => {
	test("lists every machine's threads newest first, never a hidden project's, with the down machine under unavailable", async () => {
		const { data, isError } = await list();
		expect(isError).toBe(false);
		expect(data.threads.map((t) => t.thread_id)).toEqual([
			ids.third,
			ids.hello,
			ids.edit,
		]);
		expect(data.threads.map((t) => t.thread_id)).not.toContain(ids.hidden);
		expect(data.threads[0]).toMatchObject({
			machine: "a",
			project: { title: "demo" },
			status: "completed",
			state: "settled",
			pending: null,
			latest_run: { ordinal: 1, status: "completed" },
			archived: false,
			watched: true,
		});
		expect(data.unavailable).toEqual([
			{ machine: "down", state: "offline", reason: expect.any(String) },
		]);
		expect(data.next_cursor).toBeNull();
		// Even searching for it by its text does not reveal the hidden thread.
		expect((await list({ query: "hidden" })).data.threads).toEqual([]);
	});

	test("filters by machine, query and state", async () => {
		expect(
			(await list({ machine: "b" })).data.threads.map((t) => t.thread_id),
		).toEqual([ids.hello]);
		expect(
			(await list({ query: "zEBRA" })).data.threads.map((t) => t.thread_id),
		).toEqual([ids.hello]);
		// The latest message counts too: "edit a file" answered "Edited src/app.ts."
		expect(
			(await list({ query: "EDITED src/" })).data.threads.map(
				(t) => t.thread_id,
			),
		).toEqual([ids.edit]);
		expect((await list({ state: "attention" })).data.threads).toEqual([]);
		expect((await list({ state: "settled" })).data.threads).toHaveLength(3);
	});

	test("the active list is read from the shells already held: no request reaches T3 but its message search", async () => {
		const sims = [stack.sim("a"), stack.sim("b")];
		const requests = () =>
			sims.flatMap((sim) =>
				sim
					.frames()
					.filter((f) => f.dir === "recv")
					.flatMap((f) => (Array.isArray(f.frame) ? f.frame : [f.frame]))
					.map((m) => m as { _tag?: string; tag?: string } | null)
					// A query also asks T3's message search (test/integration/search.test.ts).
					.filter(
						(m) =>
							m?._tag === "Request" && m.tag !== "orchestration.searchThreads",
					),
			).length;
		for (const sim of sims) sim.record(true);
		try {
			const before = requests();
			const { data } = await list({ query: "zebra" });
			expect(data.threads.map((t) => t.thread_id)).toEqual([ids.hello]);
			expect(requests()).toBe(before);
			// The recording does see requests: archived threads are read from T3.
			await list({ archived: true });
			expect(requests()).toBeGreaterThan(before);
		} finally {
			for (const sim of sims) sim.record(false);
		}
	});

	test("pages with a cursor bound to its filters", async () => {
		const seen: string[] = [];
		let cursor: string | null | undefined;
		do {
			const page = await list({ limit: 1, ...(cursor ? { cursor } : {}) });
			expect(page.isError).toBe(false);
			seen.push(...page.data.threads.map((t) => t.thread_id));
			cursor = page.data.next_cursor;
		} while (cursor);
		expect(seen).toEqual([ids.third, ids.hello, ids.edit]);

		const first = await list({ limit: 1 });
		const other = await list({
			limit: 1,
			machine: "a",
			cursor: first.data.next_cursor,
		});
		expect(other.isError).toBe(true);
		expect(other.text).toContain(
			"cursor is not valid; call again without cursor (it was made for other filters",
		);
		const junk = await list({ cursor: "not-a-cursor" });
		expect(junk.isError).toBe(true);
		expect(junk.text).toContain(
			"cursor is not valid; call again without cursor.",
		);
	});

	test("a hidden project's thread cannot be managed, deleted or diffed either", async () => {
		for (const [tool, args] of [
			["t3_manage", { action: "archive" }],
			["t3_delete", {}],
			["t3_diff", {}],
		] as const) {
			const r = await callTool(client, tool, {
				thread_id: ids.hidden,
				...args,
			});
			expect(r.isError).toBe(true);
			expect(r.text).toContain(`Thread "${ids.hidden}" was not found`);
		}
		expect(stack.sim("a").threadIds()).toContain(ids.hidden);
	});

	test("a named machine that is not online is an error", async () => {
		const r = await list({ machine: "down" });
		expect(r.isError).toBe(true);
		expect(r.text).toContain('Machine "down" is offline');
	});
});

describe("t3_manage and t3_delete", () => {
	test("an archived thread has the same status in t3_thread, t3_threads and t3_manage", async () => {
		const id = await dispatchDone("b", "say hi before the archive");
		const archived = await manage(id, "archive");
		expect(archived.data).toMatchObject({
			status: "completed",
			archived: true,
		});
		// Not in the live shell any more: read from its projection, which carries no status.
		const read = await callTool<{ status: string }>(client, "t3_thread", {
			thread_id: id,
		});
		expect(read.data.status).toBe("completed");
		const listed = (await list({ archived: true })).data.threads.find(
			(t) => t.thread_id === id,
		);
		expect(listed).toMatchObject({
			status: "completed",
			state: "settled",
			latest_run: { status: "completed" },
		});
		expect((await manage(id, "unarchive")).data.status).toBe("completed");
	});

	test("rename → archive → list archived → unarchive → settle → unsettle → stop_session → delete", async () => {
		const id = await dispatchDone("b", "say hi for the lifecycle");
		const renamed = await manage(id, "rename", { title: "Lifecycle" });
		expect(renamed.isError).toBe(false);
		expect(renamed.data).toEqual({
			thread_id: id,
			action: "rename",
			status: "completed",
			title: "Lifecycle",
			archived: false,
			pinned: false,
			changed: true,
			note: null,
		});

		const archived = await manage(id, "archive");
		expect(archived.data).toMatchObject({ archived: true });
		const active = await list({ machine: "b" });
		expect(active.data.threads.map((t) => t.thread_id)).not.toContain(id);
		const inArchive = await list({ archived: true });
		expect(inArchive.data.threads).toEqual([
			expect.objectContaining({
				thread_id: id,
				title: "Lifecycle",
				archived: true,
			}),
		]);
		const again = await manage(id, "archive");
		expect(again.isError).toBe(false);
		expect(again.data).toMatchObject({
			archived: true,
			changed: false,
			note: "The thread is already archived: nothing to do (t3_threads with archived: true lists it).",
		});

		expect((await manage(id, "unarchive")).data.archived).toBe(false);
		expect((await manage(id, "settle")).isError).toBe(false);
		expect((await manage(id, "unsettle")).isError).toBe(false);
		const stopped = await manage(id, "stop_session");
		expect(stopped.isError).toBe(false);
		const session = (
			stack.sim("b").projection(id) as { providerSessions: unknown[] }
		).providerSessions;
		expect(session).toEqual([]);

		const deleted = await callTool(client, "t3_delete", { thread_id: id });
		expect(deleted.data).toEqual({ thread_id: id, deleted: true });
		expect(stack.sim("b").threadIds()).not.toContain(id);
		const after = await list();
		expect(after.data.threads.map((t) => t.thread_id)).not.toContain(id);
		const watch = await callTool<{
			watched: { thread_id: string }[];
			unwatched: { thread_id: string }[];
		}>(client, "t3_watch");
		expect(
			[...watch.data.watched, ...watch.data.unwatched].map((t) => t.thread_id),
		).not.toContain(id);
		const gone = await manage(id, "rename", { title: "x" });
		expect(gone.isError).toBe(true);
		expect(gone.text).toContain("was not found on any machine");
	});

	test("T3's refusals say what to do first", async () => {
		const busy = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
			machine: "b",
			project: "demo",
			prompt: "long task",
		});
		await untilRunning(client, busy.data.thread_id);
		const archive = await manage(busy.data.thread_id, "archive");
		expect(archive.isError).toBe(true);
		expect(archive.text).toContain("cannot be archived while it is working");
		expect(archive.text).toContain("t3_interrupt");
		stack.sim("b").finishRun(busy.data.thread_id);

		const asking = await callTool<{ thread_id: string }>(
			client,
			"t3_dispatch",
			{ machine: "b", project: "demo", prompt: "ask me" },
		);
		const w = await callTool<{ outcome: string }>(client, "t3_wait", {
			thread_id: asking.data.thread_id,
			timeout: 20,
		});
		expect(w.data.outcome).toBe("question");
		const settle = await manage(asking.data.thread_id, "settle");
		expect(settle.isError).toBe(true);
		expect(settle.text).toContain("t3_answer");
		const listed = await list({ state: "attention" });
		expect(listed.data.threads).toEqual([
			expect.objectContaining({
				thread_id: asking.data.thread_id,
				pending: "question",
			}),
		]);

		const noTitle = await manage(ids.third, "rename");
		expect(noTitle.isError).toBe(true);
		expect(noTitle.text).toContain('title: required for action "rename"');
	});

	test("resume_queue starts the follow-ups an interrupt held", async () => {
		const first = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
			machine: "a",
			project: "demo",
			prompt: "long task",
		});
		const id = first.data.thread_id;
		await untilRunning(client, id);
		await callTool(client, "t3_dispatch", { thread_id: id, prompt: "say hi" });
		// The latest run is the queued one: no diff yet, and the reason says how to see run 1's.
		const queuedDiff = await callTool<Diff>(client, "t3_diff", {
			thread_id: id,
		});
		expect(queuedDiff.data).toMatchObject({
			run_id: `run:thread:${id}:ordinal:2`,
			available: false,
		});
		expect(queuedDiff.data.reason).toContain(
			"run 2 is queued and has not started",
		);
		expect(queuedDiff.data.reason).toContain("pass its run_id");
		const held = await callTool<{ queued: { held: boolean }[] }>(
			client,
			"t3_interrupt",
			{ thread_id: id, hold_queue: true },
		);
		expect(held.data.queued).toHaveLength(1);
		const resumed = await manage(id, "resume_queue");
		expect(resumed.isError).toBe(false);
		expect(resumed.text).not.toContain("nothing to resume");
		expect(resumed.data).toMatchObject({
			thread_id: id,
			action: "resume_queue",
			archived: false,
		});
		// The interrupted run may still be what a first wait reports; the follow-up completes.
		let w: { outcome: string; run_id: string | null } | undefined;
		for (let i = 0; i < 3 && w?.run_id !== `run:thread:${id}:ordinal:2`; i++)
			w = (
				await callTool<{ outcome: string; run_id: string }>(client, "t3_wait", {
					thread_id: id,
					timeout: 20,
				})
			).data;
		expect(w).toMatchObject({
			outcome: "completed",
			run_id: `run:thread:${id}:ordinal:2`,
		});
	});

	test("resume_queue with no held queue succeeds and says there was nothing to resume", async () => {
		const r = await manage(ids.edit, "resume_queue");
		expect(r.isError).toBe(false);
		expect(r.data).toMatchObject({ thread_id: ids.edit, archived: false });
		expect(r.data).toMatchObject({
			changed: false,
			note: "No queued run of this thread was held (an interrupt with hold_queue or a T3 server restart holds them): nothing to resume.",
		});
	});

	test("nothing to do is changed: false with a note, never a refusal or an unrelated hint", async () => {
		const asking = await callTool<{ thread_id: string }>(
			client,
			"t3_dispatch",
			{ machine: "b", project: "demo", prompt: "ask me" },
		);
		const id = asking.data.thread_id;
		const w = await callTool<{ outcome: string }>(client, "t3_wait", {
			thread_id: id,
			timeout: 20,
		});
		expect(w.data.outcome).toBe("question");
		const commands = () =>
			stack.sim("b").stats().requests["orchestration.dispatchCommand"] ?? 0;
		const before = commands();
		const cases: [string, Record<string, unknown>, string][] = [
			["unarchive", {}, "The thread is not archived: nothing to do."],
			["unsettle", {}, "The thread is not settled: nothing to do."],
			[
				"rename",
				{ title: (await manage(id, "rename", { title: "Asking" })).data.title },
				"The thread already has this title: nothing to do.",
			],
		];
		const sent = commands();
		for (const [action, extra, note] of cases) {
			const r = await manage(id, action, extra);
			expect([action, r.isError]).toEqual([action, false]);
			expect(r.data).toMatchObject({
				thread_id: id,
				action,
				archived: false,
				changed: false,
				note,
			});
			// A pending question has nothing to do with it.
			expect(r.text).not.toContain("t3_answer");
		}
		expect(sent).toBe(before + 1);
		expect(commands()).toBe(sent);
		await callTool(client, "t3_interrupt", { thread_id: id });
	});

	test("an idempotency_key replay returns the first result", async () => {
		const first = await manage(ids.third, "rename", {
			title: "Once",
			idempotency_key: "rename-once",
		});
		expect(first.isError).toBe(false);
		await manage(ids.third, "rename", { title: "Changed meanwhile" });
		const replay = await manage(ids.third, "rename", {
			title: "Once",
			idempotency_key: "rename-once",
		});
		expect(replay.data).toEqual(first.data);
		// Not done again: the title set in between stays.
		const shown = await callTool<{ title: string }>(client, "t3_thread", {
			thread_id: ids.third,
		});
		expect(shown.data.title).toBe("Changed meanwhile");
		const other = await manage(ids.third, "rename", {
			title: "Different",
			idempotency_key: "rename-once",
		});
		expect(other.isError).toBe(true);
		expect(other.text).toContain('idempotency_key "rename-once" was used');
	});

	test("t3_delete: an idempotency_key replay returns the first result", async () => {
		const id = await dispatchDone("b", "say hi to delete once");
		const args = { thread_id: id, idempotency_key: "delete-once" };
		const first = await callTool(client, "t3_delete", args);
		expect(first.data).toEqual({ thread_id: id, deleted: true });
		const replay = await callTool(client, "t3_delete", args);
		expect(replay.isError).toBe(false);
		expect(replay.data).toEqual(first.data);
		// Without the key the thread is simply gone.
		const again = await callTool(client, "t3_delete", { thread_id: id });
		expect(again.isError).toBe(true);
	});

	test("a thread no machine has: the error points to t3_threads to find one", async () => {
		for (const [tool, args] of [
			["t3_manage", { action: "archive" }],
			["t3_delete", {}],
			["t3_diff", {}],
			["t3_thread", {}],
		] as const) {
			const r = await callTool(client, tool, {
				thread_id: "no-such-thread",
				...args,
			});
			expect(r.isError).toBe(true);
			expect([tool, r.text]).toEqual([
				tool,
				expect.stringContaining("Call t3_threads to find threads"),
			]);
		}
	});
});

describe("t3_diff", () => {
	test("a run's diff: per-file summary and the unified diff", async () => {
		const d = await callTool<Diff>(client, "t3_diff", { thread_id: ids.edit });
		expect(d.isError).toBe(false);
		expect(d.data).toMatchObject({
			available: true,
			reason: null,
			files: [{ path: "src/app.ts", additions: 3, deletions: 1 }],
			truncated: false,
			next_cursor: null,
		});
		expect(d.data.diff).toContain("--- a/src/app.ts\n+++ b/src/app.ts\n");
		expect(d.data.diff).toContain("+src/app.ts line 1 written by run 1\n");
	});

	test("the whole thread's diff, paged to the end at line boundaries", async () => {
		const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
			thread_id: ids.edit,
			prompt: "big edit",
		});
		await callTool(client, "t3_wait", { thread_id: d.data.thread_id });
		const pages: Diff[] = [];
		let cursor: string | null = null;
		do {
			const page: { data: Diff; isError: boolean } = await callTool<Diff>(
				client,
				"t3_diff",
				{
					thread_id: ids.edit,
					whole_thread: true,
					...(cursor ? { cursor } : {}),
				},
			);
			expect(page.isError).toBe(false);
			pages.push(page.data);
			cursor = page.data.next_cursor;
		} while (cursor);
		expect(pages.length).toBeGreaterThan(1);
		for (const page of pages) {
			expect(new TextEncoder().encode(page.diff).length).toBeLessThanOrEqual(
				60_000,
			);
			expect(page.diff.endsWith("\n")).toBe(true);
		}
		expect(pages.at(-1)?.truncated).toBe(false);
		expect(pages[0]?.files).toEqual([
			{ path: "data/big.txt", additions: 2500, deletions: 0 },
			{ path: "src/app.ts", additions: 3, deletions: 1 },
		]);
		const whole = pages.map((p) => p.diff).join("");
		expect(whole.split("\n").filter((l) => l.startsWith("+d")).length).toBe(
			2500,
		);
		const wrong = await callTool(client, "t3_diff", {
			thread_id: ids.hello,
			cursor: pages[0]?.next_cursor,
		});
		expect(wrong.isError).toBe(true);
		expect(wrong.text).toContain(
			"cursor is not valid; call again without cursor (it belongs to another t3_diff request",
		);
	});

	test("an interrupted run has no diff: available false with the reason", async () => {
		const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
			machine: "a",
			project: "demo",
			prompt: "long task",
		});
		await untilRunning(client, d.data.thread_id);
		await callTool(client, "t3_interrupt", { thread_id: d.data.thread_id });
		const w = await callTool<{ outcome: string }>(client, "t3_wait", {
			thread_id: d.data.thread_id,
			timeout: 20,
		});
		expect(w.data.outcome).toBe("interrupted");
		const diff = await callTool<Diff>(client, "t3_diff", {
			thread_id: d.data.thread_id,
		});
		expect(diff.isError).toBe(false);
		expect(diff.data.available).toBe(false);
		expect(diff.data.reason).toContain("run 1 (interrupted)");
		expect(diff.data.reason).toContain("Checkpoint ref is unavailable");
		expect(diff.data.files).toEqual([]);
	});
});
