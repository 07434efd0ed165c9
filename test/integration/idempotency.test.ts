/**
 * Idempotency keys on t3_dispatch (CONTRACT.md "Idempotency"), over HTTP with the official MCP
 * client against the simulator: a key names one operation; the same arguments return the first
 * result, different ones are an error naming the earlier operation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	callTool,
	demoMachine,
	type Stack,
	startStack,
} from "../helpers/stack.ts";

type Dispatched = {
	thread_id: string;
	run_id: string | null;
	project: { id: string; title: string; path: string };
};

let stack: Stack;
let client: Client;
beforeAll(async () => {
	stack = await startStack({
		machines: [demoMachine([["other", "/srv/t3/other"]], ["demo", "other"])],
	});
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
});

const dispatch = (args: Record<string, unknown>) =>
	callTool<Dispatched>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		...args,
	});
const runsOf = async (threadId: string) =>
	(
		await callTool<{ runs: unknown[] }>(client, "t3_thread", {
			thread_id: threadId,
			turns: 10,
		})
	).data.runs.length;

describe("idempotency_key on t3_dispatch", () => {
	test("the same key and arguments return the first thread and run; no second run", async () => {
		const threads = stack.sim().threadIds().length;
		const one = await dispatch({ prompt: "once", idempotency_key: "k-same" });
		const two = await dispatch({ prompt: "once", idempotency_key: "k-same" });
		expect(one.isError).toBe(false);
		expect(two.isError).toBe(false);
		expect(two.data.thread_id).toBe(one.data.thread_id);
		expect(two.data.run_id).toBe(one.data.run_id);
		expect(stack.sim().threadIds().length).toBe(threads + 1);
		expect(await runsOf(one.data.thread_id)).toBe(1);
	});

	test("project is compared after resolving it: title, path and id name the same operation", async () => {
		const one = await dispatch({
			project: "other",
			prompt: "resolved",
			idempotency_key: "k-project",
		});
		const byPath = await dispatch({
			project: "/srv/t3/other",
			prompt: "resolved",
			idempotency_key: "k-project",
		});
		const byId = await dispatch({
			project: one.data.project.id,
			prompt: "resolved",
			idempotency_key: "k-project",
		});
		expect(byPath.isError).toBe(false);
		expect(byId.isError).toBe(false);
		expect(byPath.data.thread_id).toBe(one.data.thread_id);
		expect(byId.data.thread_id).toBe(one.data.thread_id);
	});

	test("the same key with a different prompt is an error naming the earlier dispatch; nothing is sent", async () => {
		const one = await dispatch({ prompt: "first", idempotency_key: "k-diff" });
		const threads = stack.sim().threadIds().length;
		const two = await dispatch({ prompt: "second", idempotency_key: "k-diff" });
		expect(two.isError).toBe(true);
		expect(two.text).toMatch(
			new RegExp(
				`^idempotency_key "k-diff" was used for a t3_dispatch of thread ${one.data.thread_id} at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z with different arguments \\(prompt differs\\)\\.`,
			),
		);
		expect(stack.sim().threadIds().length).toBe(threads);
		expect(await runsOf(one.data.thread_id)).toBe(1);
	});

	test("every argument counts: another project, title or watch is another operation", async () => {
		await dispatch({ prompt: "p", idempotency_key: "k-args" });
		const other = await dispatch({
			project: "other",
			prompt: "p",
			title: "T",
			idempotency_key: "k-args",
		});
		expect(other.isError).toBe(true);
		expect(other.text).toContain("(project and title differ)");
		const unwatched = await dispatch({
			prompt: "p",
			watch: false,
			idempotency_key: "k-args",
		});
		expect(unwatched.text).toContain("(watch differs)");
		const otherMode = await dispatch({
			prompt: "p",
			runtime_mode: "approval-required",
			interaction_mode: "plan",
			idempotency_key: "k-args",
		});
		expect(otherMode.text).toContain(
			"(interaction_mode and runtime_mode differ)",
		);
	});

	test("a key used for a follow-up names that thread; reusing it on another thread is refused", async () => {
		const a = await dispatch({ prompt: "thread a" });
		const b = await dispatch({ prompt: "thread b" });
		const follow = await callTool<Dispatched>(client, "t3_dispatch", {
			thread_id: a.data.thread_id,
			prompt: "more",
			idempotency_key: "k-follow",
		});
		expect(follow.isError).toBe(false);
		const again = await callTool<Dispatched>(client, "t3_dispatch", {
			thread_id: a.data.thread_id,
			prompt: "more",
			idempotency_key: "k-follow",
		});
		expect(again.data.run_id).toBe(follow.data.run_id);
		const elsewhere = await callTool(client, "t3_dispatch", {
			thread_id: b.data.thread_id,
			prompt: "more",
			idempotency_key: "k-follow",
		});
		expect(elsewhere.isError).toBe(true);
		expect(elsewhere.text).toContain(
			`was used for a t3_dispatch of thread ${a.data.thread_id} at`,
		);
		expect(elsewhere.text).toContain("(thread_id differs)");
	});

	test("request_id is still accepted as the older name of the same key", async () => {
		const one = await dispatch({ prompt: "old name", request_id: "k-old" });
		const two = await dispatch({
			prompt: "old name",
			idempotency_key: "k-old",
		});
		const three = await dispatch({
			prompt: "old name",
			idempotency_key: "k-old",
			request_id: "k-old",
		});
		expect(two.data.thread_id).toBe(one.data.thread_id);
		expect(three.data.thread_id).toBe(one.data.thread_id);
		const changed = await dispatch({ prompt: "new text", request_id: "k-old" });
		expect(changed.text).toStartWith(
			'request_id "k-old" was used for a t3_dispatch',
		);
	});

	test("idempotency_key and request_id both given and different: an error naming both", async () => {
		const threads = stack.sim().threadIds().length;
		const both = await dispatch({
			prompt: "x",
			idempotency_key: "k-a",
			request_id: "k-b",
		});
		expect(both.isError).toBe(true);
		expect(both.text).toBe(
			'idempotency_key and request_id: both given and different ("k-a", "k-b"). request_id is the older name of idempotency_key: pass only idempotency_key.',
		);
		expect(stack.sim().threadIds().length).toBe(threads);
	});

	test("the same key in two calls at once: one thread, one run", async () => {
		const threads = stack.sim().threadIds().length;
		const [a, b] = await Promise.all([
			dispatch({ prompt: "at once", idempotency_key: "k-concurrent" }),
			dispatch({ prompt: "at once", idempotency_key: "k-concurrent" }),
		]);
		expect(a.isError).toBe(false);
		expect(b.isError).toBe(false);
		expect(b.data.thread_id).toBe(a.data.thread_id);
		expect(b.data.run_id).toBe(a.data.run_id);
		expect(stack.sim().threadIds().length).toBe(threads + 1);
	});
});
