/**
 * Hidden means nonexistent, also after the allowlist changes (CONTRACT.md `projects`): threads
 * dispatched while a project was allowed stay in the state file when the operator narrows
 * `projects`. From then on no tool lists, returns or acts on them, idempotency keys pointing at
 * them are refused without details, and their events are held (counted as `outbox.held`), not
 * sent; allowed again, everything is back and the held events flow. The server restarts on the
 * same state with the changed config, as an operator's config change does.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import {
	callTool,
	demoMachine,
	launchOnSim,
	type Stack,
	startStack,
	until,
	untilRunning,
} from "../helpers/stack.ts";

type Dispatched = { thread_id: string; run_id: string | null };
type Tracked = { thread_id: string }[];
type Health = {
	outbox: { pending: number; oldest_pending_s: number; held: number };
};

let stack: Stack;
let receiver: Receiver;
let client: Client;
/** Thread ids: one in the project that stays allowed, two in the one that gets hidden. */
let visible: string;
let secret: string;
let long: string;
/** A thread of the hidden project made in T3 itself, which this connector only renamed. */
let renamed: string;

beforeAll(async () => {
	receiver = startReceiver();
	// No webhook at first: events are recorded and wait in the outbox.
	stack = await startStack({
		machines: [demoMachine([["secret", "/srv/t3/secret"]], ["*"])],
	});
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

const dispatch = (args: Record<string, unknown>) =>
	callTool<Dispatched>(client, "t3_dispatch", { machine: "demo", ...args });
const health = async () =>
	(await (await fetch(`${stack.server.url}/healthz`)).json()) as Health;
const narrowTo = (projects: string[]) =>
	stack.restartServer((config) => {
		(config.machines[0] as { projects: string[] }).projects = projects;
		config.server.hookUrl = receiver.url;
	});
const eventsFor = (threadId: string) =>
	receiver.deliveries.filter((d) => d.body.thread_id === threadId);

test("while allowed: threads in both projects, their events waiting in the outbox", async () => {
	visible = (
		await dispatch({
			project: "demo",
			prompt: "visible work",
			idempotency_key: "k-visible",
		})
	).data.thread_id;
	secret = (
		await dispatch({
			project: "secret",
			prompt: "secret work",
			idempotency_key: "k-secret",
		})
	).data.thread_id;
	long = (
		await dispatch({
			project: "/srv/t3/secret",
			prompt: "long task",
			request_id: "r-long",
		})
	).data.thread_id;
	for (const id of [visible, secret]) {
		const w = await callTool(client, "t3_wait", { thread_id: id, timeout: 20 });
		expect(w.data.outcome).toBe("completed");
	}
	await untilRunning(client, long);
	renamed = await launchOnSim(stack.sim(), "secret", "made in T3");
	const rename = await callTool(client, "t3_manage", {
		thread_id: renamed,
		action: "rename",
		title: "Secret plan",
		idempotency_key: "k-rename",
	});
	expect(rename.isError).toBe(false);
	await until(
		async () => (await health()).outbox.pending === 2,
		10_000,
		"two events recorded",
	);
});

test("after narrowing projects: the hidden project's event is held, not sent; /healthz counts it as held", async () => {
	await narrowTo(["demo"]);
	client = await stack.client();
	expect((await health()).outbox.held).toBe(1);
	await until(() => eventsFor(visible).length === 1, 10_000, "visible event");
	// A run of the hidden project that finishes now produces nothing either.
	stack.sim().finishRun(long);
	await until(
		() =>
			(
				stack.sim().projection(long) as { runs: { status: string }[] }
			).runs.every((r) => r.status === "completed"),
		10_000,
		"long run completed on the sim",
	);
	// Barrier: a later run's event arrives, so anything sent before it would be here already.
	const after = await dispatch({ project: "demo", prompt: "after" });
	await until(
		() => eventsFor(after.data.thread_id).length === 1,
		10_000,
		"later event",
	);
	expect(receiver.deliveries.map((d) => d.body.thread_id).sort()).toEqual(
		[visible, after.data.thread_id].sort(),
	);
	for (const d of receiver.deliveries) expect(d.raw).not.toContain("secret");
	// The receiver has the event before the outbox marks it delivered.
	await stack.server.services.events.delivery.idle();
	expect((await health()).outbox).toMatchObject({
		pending: 0,
		oldest_pending_s: 0,
		held: 1,
	});
});

test("after narrowing projects: t3_watch lists none of its threads", async () => {
	const list = await callTool<{ watched: Tracked; unwatched: Tracked }>(
		client,
		"t3_watch",
	);
	const ids = [...list.data.watched, ...list.data.unwatched].map(
		(t) => t.thread_id,
	);
	expect(ids).toContain(visible);
	expect(ids).not.toContain(secret);
	expect(ids).not.toContain(long);
	expect(list.text).not.toContain("secret");
});

test("after narrowing projects: every tool answers for its threads exactly as for unknown ones", async () => {
	const calls: [string, Record<string, unknown>][] = [
		["t3_thread", {}],
		["t3_wait", { timeout: 1 }],
		["t3_answer", { answers: { q: "a" } }],
		["t3_interrupt", {}],
		["t3_watch", { enabled: true }],
		["t3_dispatch", { prompt: "more" }],
		["t3_manage", { action: "archive" }],
		["t3_diff", {}],
		["t3_delete", {}],
	];
	for (const [tool, args] of calls) {
		for (const id of [secret, long, renamed]) {
			const hidden = await callTool(client, tool, { ...args, thread_id: id });
			const unknown = await callTool(client, tool, {
				...args,
				thread_id: "no-such-thread",
			});
			expect(hidden.isError).toBe(true);
			expect(hidden.text.replaceAll(id, "no-such-thread")).toBe(unknown.text);
		}
	}
});

test("after narrowing projects: its idempotency keys are refused without details", async () => {
	const cases: [Record<string, unknown>, string][] = [
		[
			{ project: "secret", prompt: "secret work", idempotency_key: "k-secret" },
			'idempotency_key "k-secret"',
		],
		[
			{ project: "demo", prompt: "other", idempotency_key: "k-secret" },
			'idempotency_key "k-secret"',
		],
		[
			{ project: "/srv/t3/secret", prompt: "long task", request_id: "r-long" },
			'request_id "r-long"',
		],
	];
	for (const [args, name] of cases) {
		const reused = await dispatch(args);
		expect(reused.isError).toBe(true);
		expect(reused.text).toBe(
			`${name} is already used and cannot be used again. Choose a new key for a new operation.`,
		);
	}
	// Also a key of another tool, for a thread this connector never dispatched or tracked: the
	// first result (its title and status) is not handed out.
	const rename = await callTool(client, "t3_manage", {
		thread_id: renamed,
		action: "rename",
		title: "Secret plan",
		idempotency_key: "k-rename",
	});
	expect(rename.isError).toBe(true);
	expect(rename.text).toBe(
		'idempotency_key "k-rename" is already used and cannot be used again. Choose a new key for a new operation.',
	);
	// The visible project's keys work as before.
	const again = await dispatch({
		project: "demo",
		prompt: "visible work",
		idempotency_key: "k-visible",
	});
	expect(again.data.thread_id).toBe(visible);
});

test("allowed again: the threads are back and the held events flow, including what happened while hidden", async () => {
	await narrowTo(["*"]);
	client = await stack.client();
	await until(
		() => eventsFor(secret).length === 1 && eventsFor(long).length === 1,
		10_000,
		"held events",
	);
	expect(eventsFor(secret)[0]?.body).toMatchObject({
		type: "thread.completed",
		project: { title: "secret", path: "/srv/t3/secret" },
		message: "Hello from the T3 simulator. You said: secret work",
	});
	expect(eventsFor(long)[0]?.body).toMatchObject({
		type: "thread.completed",
		message: "The long task is done.",
	});
	await until(
		async () => (await health()).outbox.pending === 0,
		10_000,
		"outbox drained",
	);
	expect((await health()).outbox.held).toBe(0);
	const list = await callTool<{ watched: Tracked }>(client, "t3_watch");
	expect(list.data.watched.map((t) => t.thread_id)).toEqual(
		expect.arrayContaining([visible, secret, long]),
	);
	const reused = await dispatch({
		project: "secret",
		prompt: "secret work",
		idempotency_key: "k-secret",
	});
	expect(reused.data.thread_id).toBe(secret);
	const renameAgain = await callTool<{ title: string }>(client, "t3_manage", {
		thread_id: renamed,
		action: "rename",
		title: "Secret plan",
		idempotency_key: "k-rename",
	});
	expect(renameAgain.data.title).toBe("Secret plan");
	const t = await callTool(client, "t3_thread", { thread_id: long });
	expect(t.isError).toBe(false);
});
