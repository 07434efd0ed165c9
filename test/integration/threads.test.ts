/**
 * The dispatch → wait → answer / interrupt loop end to end: the official MCP client (both
 * eras) → our server → the protocol-2 simulator over real sockets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	callTool,
	demoMachine,
	ERAS,
	type Stack,
	startStack,
	until,
	untilRunning,
} from "../helpers/stack.ts";

type Dispatched = {
	thread_id: string;
	run_id: string | null;
	run_status: string;
	queued: boolean;
	watched: boolean;
	origin: string | null;
};
type Waited = {
	thread_id: string;
	outcome: string;
	run_id: string | null;
	run_status: string | null;
	message: string | null;
	error: string | null;
	question: {
		request_id: string;
		kind: string;
		prompt: string | null;
		questions: { id: string; options: string[] }[];
	} | null;
	elapsed_s: number;
};

let stack: Stack;
beforeAll(async () => {
	stack = await startStack({
		machines: [
			demoMachine(
				[
					["other", "/srv/t3/other"],
					["twin", "/srv/t3/twin-a"],
					["twin", "/srv/t3/twin-b"],
					["secret", "/srv/t3/secret"],
				],
				["demo", "other", "twin"],
			),
		],
		progressIntervalMs: 20,
	});
});
afterAll(async () => {
	await stack.stop();
});

const dispatch = (client: Client, args: Record<string, unknown>) =>
	callTool<Dispatched>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		...args,
	});
const wait = (
	client: Client,
	args: Record<string, unknown>,
	options?: Parameters<typeof callTool>[3],
) => callTool<Waited>(client, "t3_wait", { timeout: 20, ...args }, options);
const answer = (
	client: Client,
	threadId: string,
	args: Record<string, unknown>,
) => callTool(client, "t3_answer", { thread_id: threadId, ...args });

describe.each(ERAS)("the loop (%s era)", (era) => {
	test("dispatch returns at once; wait reports completion with the agent's text", async () => {
		const client = await stack.client({ era });
		const d = await dispatch(client, { prompt: "say hi" });
		expect(d.isError).toBe(false);
		expect(d.data.run_id).toBeString();
		expect(["preparing", "starting"]).toContain(d.data.run_status);
		expect(d.data.watched).toBe(true);
		const w = await wait(client, { thread_id: d.data.thread_id });
		expect(w.data).toMatchObject({
			thread_id: d.data.thread_id,
			outcome: "completed",
			run_id: d.data.run_id,
			run_status: "completed",
			message: "Hello from the T3 simulator. You said: say hi",
			error: null,
			question: null,
		});
	});

	test("question → t3_answer → completed", async () => {
		const client = await stack.client({ era });
		const d = await dispatch(client, { prompt: "please ask me a question" });
		const q = await wait(client, { thread_id: d.data.thread_id });
		expect(q.data.outcome).toBe("question");
		expect(q.data.question).toMatchObject({
			kind: "user_input",
			questions: [
				{
					id: "color",
					header: "Color",
					text: "Which color should I use?",
					options: ["Red", "Blue"],
					multi_select: false,
				},
			],
		});
		const a = await answer(client, d.data.thread_id, {
			answers: { color: "Red" },
		});
		expect(a.isError).toBe(false);
		expect(a.data).toEqual({
			thread_id: d.data.thread_id,
			request_id: q.data.question?.request_id as string,
			status: "sent",
			custom: [],
		});
		const again = await answer(client, d.data.thread_id, {
			answers: { color: "Red" },
		});
		expect(again.isError).toBe(true);
		const w = await wait(client, { thread_id: d.data.thread_id });
		expect(w.data.outcome).toBe("completed");
		// The label was sent as the option's value (released servers give values).
		expect(w.data.message).toBe("You chose red.");
	});

	test("long task → t3_interrupt → interrupted", async () => {
		const client = await stack.client({ era });
		const d = await dispatch(client, { prompt: "long task" });
		await untilRunning(client, d.data.thread_id);
		const i = await callTool<{
			run_id: string;
			run_status: string;
			interrupted: boolean;
		}>(client, "t3_interrupt", { thread_id: d.data.thread_id });
		expect(i.isError).toBe(false);
		expect(i.data.run_id).toBe(d.data.run_id as string);
		expect(i.data.interrupted).toBe(true);
		const w = await wait(client, { thread_id: d.data.thread_id });
		expect(w.data.outcome).toBe("interrupted");
		expect(w.data.run_status).toBe("interrupted");
		const nothing = await callTool(client, "t3_interrupt", {
			thread_id: d.data.thread_id,
		});
		expect(nothing.isError).toBe(false);
		expect(nothing.data.interrupted).toBe(false);
		expect(nothing.text).toContain("Nothing to interrupt");
	});

	test("failing prompt → failed with its error", async () => {
		const client = await stack.client({ era });
		const d = await dispatch(client, { prompt: "please fail" });
		const w = await wait(client, { thread_id: d.data.thread_id });
		expect(w.data.outcome).toBe("failed");
		expect(w.data.error).toBe("sim agent failure");
	});
});

describe("continuations", () => {
	test("a follow-up runs in the same thread; waiting at once reports the new run, not the old one", async () => {
		const client = await stack.client();
		const first = await dispatch(client, { prompt: "first message" });
		expect(
			(await wait(client, { thread_id: first.data.thread_id })).data.outcome,
		).toBe("completed");
		const second = await callTool<Dispatched>(client, "t3_dispatch", {
			thread_id: first.data.thread_id,
			prompt: "second message",
		});
		expect(second.isError).toBe(false);
		expect(second.data.thread_id).toBe(first.data.thread_id);
		expect(second.data.run_id).not.toBe(first.data.run_id);
		const w = await wait(client, { thread_id: first.data.thread_id });
		expect(w.data.run_id).toBe(second.data.run_id);
		expect(w.data.message).toBe(
			"Hello from the T3 simulator. You said: second message",
		);
		const thread = await callTool<{ runs: { ordinal: number }[] }>(
			client,
			"t3_thread",
			{ thread_id: first.data.thread_id, turns: 5 },
		);
		expect(thread.data.runs.map((r) => r.ordinal)).toEqual([1, 2]);
	});

	test("a title with a follow-up renames the thread; the same title sends nothing more", async () => {
		const client = await stack.client();
		const first = await dispatch(client, {
			prompt: "first message",
			title: "Before",
		});
		const id = first.data.thread_id;
		await wait(client, { thread_id: id });
		const renames = () =>
			stack
				.sim()
				.frames()
				.filter(
					(f) =>
						f.dir === "recv" &&
						JSON.stringify(f.frame).includes('"thread.metadata.update"') &&
						JSON.stringify(f.frame).includes(id),
				).length;
		stack.sim().record(true);
		try {
			const next = await callTool<Dispatched>(client, "t3_dispatch", {
				thread_id: id,
				prompt: "second message",
				title: "  After  ",
			});
			expect(next.isError).toBe(false);
			await wait(client, { thread_id: id });
			const read = await callTool<{ title: string }>(client, "t3_thread", {
				thread_id: id,
			});
			expect(read.data.title).toBe("After");
			expect(renames()).toBe(1);
			await callTool(client, "t3_dispatch", {
				thread_id: id,
				prompt: "third message",
				title: "After",
			});
			await wait(client, { thread_id: id });
			expect(renames()).toBe(1);
		} finally {
			stack.sim().record(false);
		}
	});

	test("a follow-up to a busy thread is queued and reported as such", async () => {
		const client = await stack.client();
		const busy = await dispatch(client, { prompt: "long task" });
		await untilRunning(client, busy.data.thread_id);
		const queued = await callTool<Dispatched>(client, "t3_dispatch", {
			thread_id: busy.data.thread_id,
			prompt: "after that",
		});
		expect(queued.data.queued).toBe(true);
		expect(queued.data.run_status).toBe("queued");
		await callTool(client, "t3_interrupt", { thread_id: busy.data.thread_id });
		// The follow-up is the latest run (it starts once the interrupt is done).
		const t = await callTool<{ latest_run: { id: string; status: string } }>(
			client,
			"t3_thread",
			{ thread_id: busy.data.thread_id },
		);
		expect(t.data.latest_run.id).toBe(queued.data.run_id as string);
	});

	test("machine/project given with thread_id are checked", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "hello" });
		const wrong = await callTool(client, "t3_dispatch", {
			thread_id: d.data.thread_id,
			project: "other",
			prompt: "x",
		});
		expect(wrong.isError).toBe(true);
		expect(wrong.text).toContain('belongs to project "demo"');
	});
});

describe("waiting", () => {
	test("thread_ids returns the first to settle, naming it", async () => {
		const client = await stack.client();
		const slow = await dispatch(client, { prompt: "long task" });
		const quick = await dispatch(client, { prompt: "quick one" });
		const w = await wait(client, {
			thread_ids: [slow.data.thread_id, quick.data.thread_id],
		});
		expect(w.data.thread_id).toBe(quick.data.thread_id);
		expect(w.data.outcome).toBe("completed");
		await callTool(client, "t3_interrupt", { thread_id: slow.data.thread_id });
	});

	test("a timeout is a normal result and does not interrupt the run", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "long task" });
		const w = await wait(client, { thread_id: d.data.thread_id, timeout: 0.2 });
		expect(w.isError).toBe(false);
		expect(w.data.outcome).toBe("timeout");
		expect(w.text).toContain("t3_wait again");
		const t = await callTool<{ latest_run: { status: string } }>(
			client,
			"t3_thread",
			{ thread_id: d.data.thread_id },
		);
		expect(["starting", "running"]).toContain(t.data.latest_run.status);
		await callTool(client, "t3_interrupt", { thread_id: d.data.thread_id });
	});

	test("progress notifications arrive while waiting", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "long task" });
		const progress: unknown[] = [];
		const pending = wait(
			client,
			{ thread_id: d.data.thread_id },
			{ onprogress: (p) => progress.push(p) },
		);
		await until(
			() => progress.length >= 2,
			10_000,
			"two progress notifications",
		);
		await callTool(client, "t3_interrupt", { thread_id: d.data.thread_id });
		expect((await pending).data.outcome).toBe("interrupted");
		expect(JSON.stringify(progress[0])).toContain("elapsed");
	});

	test("the sim dropping every socket mid-wait does not lose the completion", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "long task" });
		const pending = wait(client, { thread_id: d.data.thread_id });
		const sim = stack.sim();
		const machine = stack.server.services.fleet.get("demo")?.machine;
		await untilRunning(client, d.data.thread_id);
		sim.dropSockets();
		sim.finishRun(d.data.thread_id);
		await until(
			() => machine?.status().state === "online",
			15_000,
			"back online",
		);
		const w = await pending;
		expect(w.data.outcome).toBe("completed");
		expect(w.data.message).toBe("The long task is done.");
	});

	test("an approval is reported and answered with decision", async () => {
		const client = await stack.client();
		const d = await dispatch(client, {
			prompt: "approve this command",
			runtime_mode: "approval-required",
		});
		const q = await wait(client, { thread_id: d.data.thread_id });
		expect(q.data.outcome).toBe("question");
		expect(q.data.question).toMatchObject({
			kind: "approval",
			prompt: "sim agent wants to list files",
			questions: [],
		});
		const wrong = await answer(client, d.data.thread_id, {
			answers: { x: "y" },
		});
		expect(wrong.isError).toBe(true);
		expect(wrong.text).toContain('decision: "accept" or "decline"');
		const a = await answer(client, d.data.thread_id, { decision: "accept" });
		expect(a.isError).toBe(false);
		const w = await wait(client, { thread_id: d.data.thread_id });
		expect(w.data).toMatchObject({
			outcome: "completed",
			message: "Command approved and run.",
		});
	});

	test("in full-access nothing asks: the command runs without a question", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "approve this command" });
		const w = await wait(client, { thread_id: d.data.thread_id });
		expect(w.data).toMatchObject({
			outcome: "completed",
			message: "Command run.",
		});
	});
});

describe("idempotency", () => {
	test("the same request_id returns the same thread and starts no second run", async () => {
		const client = await stack.client();
		const one = await dispatch(client, {
			prompt: "only once",
			request_id: "req-1",
		});
		const two = await dispatch(client, {
			prompt: "only once",
			request_id: "req-1",
		});
		expect(two.data.thread_id).toBe(one.data.thread_id);
		expect(two.data.run_id).toBe(one.data.run_id);
		await wait(client, { thread_id: one.data.thread_id });
		const t = await callTool<{ runs: unknown[] }>(client, "t3_thread", {
			thread_id: one.data.thread_id,
			turns: 5,
		});
		expect(t.data.runs).toHaveLength(1);
	});

	test("the same request_id in two calls at once: one thread, one run", async () => {
		const client = await stack.client();
		const [a, b] = await Promise.all([
			dispatch(client, {
				prompt: "twice at once",
				request_id: "req-concurrent",
			}),
			dispatch(client, {
				prompt: "twice at once",
				request_id: "req-concurrent",
			}),
		]);
		expect(a.isError).toBe(false);
		expect(b.isError).toBe(false);
		expect(b.data.thread_id).toBe(a.data.thread_id);
		expect(b.data.run_id).toBe(a.data.run_id);
	});

	test("a lost launchThread reply is retried with the same ids: one thread, one run", async () => {
		const client = await stack.client();
		const sim = stack.sim();
		const before = sim.threadIds().length;
		sim.dropNextReply("orchestration.launchThread");
		const d = await dispatch(client, { prompt: "reply gets lost" });
		expect(d.isError).toBe(false);
		expect(sim.threadIds().length).toBe(before + 1);
		expect(
			(await wait(client, { thread_id: d.data.thread_id })).data.outcome,
		).toBe("completed");
	});
});

describe("bad arguments", () => {
	const cases: [string, string, Record<string, unknown>, string][] = [
		[
			"empty prompt",
			"t3_dispatch",
			{ machine: "demo", project: "demo", prompt: "  " },
			"prompt: must not be empty",
		],
		[
			"oversized prompt",
			"t3_dispatch",
			{ machine: "demo", project: "demo", prompt: "x".repeat(100_001) },
			"is over the limit of 100000",
		],
		[
			"unknown machine",
			"t3_dispatch",
			{ machine: "mars", project: "demo", prompt: "hi" },
			'Unknown machine "mars". Configured machines: demo.',
		],
		[
			"unknown project",
			"t3_dispatch",
			{ machine: "demo", project: "nope", prompt: "hi" },
			'Unknown project "nope" on machine "demo". Projects there:',
		],
		[
			"hidden project",
			"t3_dispatch",
			{ machine: "demo", project: "secret", prompt: "hi" },
			'Unknown project "secret"',
		],
		[
			"ambiguous project",
			"t3_dispatch",
			{ machine: "demo", project: "twin", prompt: "hi" },
			'Project "twin" is ambiguous on machine "demo"',
		],
		[
			"no machine for a new thread",
			"t3_dispatch",
			{ prompt: "hi" },
			"machine: required to start a new thread",
		],
		[
			"bad model",
			"t3_dispatch",
			{ machine: "demo", project: "demo", prompt: "hi", model: "nomodel" },
			'model: expected "<providerInstance>/<model>"',
		],
		["wait with neither id", "t3_wait", {}, "Pass exactly one of thread_id"],
		[
			"wait with both ids",
			"t3_wait",
			{ thread_id: "a", thread_ids: ["b"] },
			"Pass exactly one of thread_id",
		],
		[
			"wait timeout too large",
			"t3_wait",
			{ thread_id: "a", timeout: 7200 },
			"timeout",
		],
		[
			"unknown thread",
			"t3_wait",
			{ thread_id: "no-such-thread" },
			'Thread "no-such-thread" was not found on any machine.',
		],
		["turns out of range", "t3_thread", { thread_id: "a", turns: 0 }, "turns"],
		[
			"bad decision",
			"t3_answer",
			{ thread_id: "a", decision: "maybe" },
			"decision",
		],
		[
			"watch with one argument",
			"t3_watch",
			{ enabled: true },
			"Pass both thread_id and enabled",
		],
	];
	test.each(cases)("%s", async (_name, tool, args, message) => {
		const client = await stack.client();
		const result = await callTool(client, tool, args);
		expect(result.isError).toBe(true);
		expect(result.text).toContain(message);
	});

	test("answers are checked against the pending question", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "ask me again" });
		expect(
			(await wait(client, { thread_id: d.data.thread_id })).data.outcome,
		).toBe("question");
		const id = d.data.thread_id;
		const unknown = await answer(client, id, { answers: { size: "big" } });
		expect(unknown.text).toContain(
			'answers: unknown question id "size". Questions: "color" (Which color should I use?; options: "Red", "Blue")',
		);
		const missing = await answer(client, id, { answers: {} });
		expect(missing.text).toContain(
			'answers: missing an answer for required question "color"',
		);
		const list = await answer(client, id, {
			answers: { color: ["Red", "Blue"] },
		});
		expect(list.text).toContain(
			"answers.color: this question takes one answer, not a list.",
		);
		const decision = await answer(client, id, { decision: "accept" });
		expect(decision.text).toContain(
			"decision: the pending request is a question, not an approval",
		);
		const custom = await answer(client, id, { answers: { color: "Green" } });
		expect(custom.isError).toBe(false);
		expect(custom.data.custom).toEqual(["color"]);
		expect((await wait(client, { thread_id: id })).data.message).toBe(
			"You chose Green.",
		);
		const nothing = await answer(client, id, { answers: { color: "Red" } });
		expect(nothing.text).toContain(`Nothing is pending on thread "${id}"`);
	});
});

describe("question variants", () => {
	test("a question that allows no free text refuses a text outside its options", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "ask me strictly" });
		const q = await wait(client, { thread_id: d.data.thread_id });
		expect(q.data.question?.questions[0]).toMatchObject({
			allow_custom: false,
		});
		const refused = await answer(client, d.data.thread_id, {
			answers: { color: "Green" },
		});
		expect(refused.isError).toBe(true);
		expect(refused.text).toBe(
			'answers.color: "Green" is not an option and this question allows no free text. Options: "Red", "Blue".',
		);
		const ok = await answer(client, d.data.thread_id, {
			answers: { color: "Blue" },
		});
		expect(ok.isError).toBe(false);
		expect(
			(await wait(client, { thread_id: d.data.thread_id })).data.message,
		).toBe("You chose blue.");
	});

	test("a multi-select question takes a list of labels, sent as their values", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "ask me several things" });
		const q = await wait(client, { thread_id: d.data.thread_id });
		expect(q.data.question?.questions[0]).toMatchObject({
			id: "toppings",
			multi_select: true,
		});
		const a = await answer(client, d.data.thread_id, {
			answers: { toppings: ["Cheese", "Basil"] },
		});
		expect(a.isError).toBe(false);
		expect(
			(await wait(client, { thread_id: d.data.thread_id })).data.message,
		).toBe("You chose cheese, basil.");
	});

	test("an optional question (required: false) may be left out: it is omitted from the answers sent", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "ask me two things" });
		const id = d.data.thread_id;
		const q = await wait(client, { thread_id: id });
		expect(q.data.question?.questions).toEqual([
			expect.objectContaining({ id: "color", required: true }),
			expect.objectContaining({ id: "finish", required: false }),
		]);
		// The required one still is required, named in the error.
		for (const answers of [{}, { finish: "Matte" }]) {
			const refused = await answer(client, id, { answers });
			expect(refused.isError).toBe(true);
			expect(refused.text).toStartWith(
				'answers: missing an answer for required question "color". Questions: "color" (Which color should I use?; options: "Red", "Blue"); "finish" (Which finish, if any?; options: "Matte", "Glossy"; optional).',
			);
		}
		const ok = await answer(client, id, { answers: { color: "Red" } });
		expect(ok.isError).toBe(false);
		const requests = (
			stack.sim().projection(id) as {
				runtimeRequests: { answers?: Record<string, unknown> }[];
			}
		).runtimeRequests;
		expect(requests.at(-1)?.answers).toEqual({ color: "red" });
		expect((await wait(client, { thread_id: id })).data.message).toBe(
			"You chose red, no finish.",
		);
	});

	test("an optional question that is answered is sent like any other", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "ask me two things" });
		await wait(client, { thread_id: d.data.thread_id });
		const ok = await answer(client, d.data.thread_id, {
			answers: { color: "Blue", finish: "Glossy" },
		});
		expect(ok.isError).toBe(false);
		expect(
			(await wait(client, { thread_id: d.data.thread_id })).data.message,
		).toBe("You chose blue, finish glossy.");
	});

	test("an empty list is not an answer to a multi-select question", async () => {
		const client = await stack.client();
		const d = await dispatch(client, { prompt: "ask me several things" });
		await wait(client, { thread_id: d.data.thread_id });
		const a = await answer(client, d.data.thread_id, {
			answers: { toppings: [] },
		});
		expect(a.isError).toBe(true);
		expect(a.text).toBe(
			'answers.toppings: an empty list is not an answer. Give one or more of the options ("Cheese", "Olives", "Basil") or non-empty free text.',
		);
		// Still pending: a real answer goes through.
		const ok = await answer(client, d.data.thread_id, {
			answers: { toppings: ["Olives"] },
		});
		expect(ok.isError).toBe(false);
	});
});

describe("abandoned waits", () => {
	test("a client that goes away (2026 era) frees the wait; the run keeps going", async () => {
		const { activeWaits } = await import("../../src/threads/wait/wait.ts");
		const client = await stack.client({ era: "modern" });
		const d = await dispatch(client, { prompt: "long task" });
		const controller = new AbortController();
		const pending = wait(
			client,
			{ thread_id: d.data.thread_id, timeout: 600 },
			{ signal: controller.signal },
		).catch((error: unknown) => error);
		await until(() => activeWaits() > 0, 10_000, "the wait to start");
		controller.abort();
		await pending;
		await until(() => activeWaits() === 0, 10_000, "the wait to be freed");
		const t = await callTool<{ latest_run: { status: string } }>(
			client,
			"t3_thread",
			{ thread_id: d.data.thread_id },
		);
		expect(["preparing", "starting", "running"]).toContain(
			t.data.latest_run.status,
		);
		await callTool(client, "t3_interrupt", { thread_id: d.data.thread_id });
	});
});
