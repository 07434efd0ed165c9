/**
 * Runtime requests as T3 0.1.x sends them, end to end (official MCP client → server → simulator
 * over real sockets): approvals with T3's own decisions and the provider's warnings, and the
 * requests nobody can answer through t3code-mcp (`auth_refresh`, `dynamic_tool_call`,
 * `not_resumable`): reported once as a question with `answerable: false` and a reason, refused
 * by t3_answer, waited through afterwards, one `thread.question` event each. Also against the
 * simulator as the pre-release engine (`compat: "prerelease"`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import type { Receiver } from "../helpers/receiver.ts";
import { callTool, type Stack, until } from "../helpers/stack.ts";
import { startTwoEngines, stopTwoEngines } from "../helpers/two-engines.ts";

type Question = {
	request_id: string;
	kind: string;
	prompt: string | null;
	answerable: boolean;
	reason: string | null;
	dismissable: boolean;
	questions: unknown[];
	decisions:
		| { decision: string; label: string; warning: string | null }[]
		| null;
	app_name: string | null;
};
type Waited = {
	thread_id: string;
	outcome: string;
	run_id: string | null;
	message: string | null;
	question: Question | null;
};
type Row = { thread_id: string; state: string; pending: string | null };

let receiver: Receiver;
let stack: Stack;
let client: Client;
beforeAll(async () => {
	({ receiver, stack, client } = await startTwoEngines());
	stack.sim("demo").record(true);
});
afterAll(() => stopTwoEngines({ stack, receiver }));

async function dispatch(prompt: string, machine = "demo"): Promise<string> {
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine,
		project: "demo",
		prompt,
		// Approvals are asked only where the runtime mode wants them (as T3 does).
		runtime_mode: "approval-required",
	});
	expect(d.isError).toBe(false);
	return d.data.thread_id;
}
const wait = async (thread_id: string, timeout = 20) =>
	(await callTool<Waited>(client, "t3_wait", { thread_id, timeout })).data;
const answer = (args: Record<string, unknown>) =>
	callTool<{ status: string }>(client, "t3_answer", args);
const row = async (thread_id: string) =>
	(
		await callTool<{ threads: Row[] }>(client, "t3_threads", {
			limit: 50,
		})
	).data.threads.find((t) => t.thread_id === thread_id);
const questionEvents = (thread_id: string) =>
	receiver.deliveries.filter(
		(d) => d.body.thread_id === thread_id && d.body.type === "thread.question",
	);

describe("approvals as T3 offers them", () => {
	test("decisions with T3's labels and the provider's warning; an offered one is sent", async () => {
		const id = await dispatch("approve with options");
		const w = await wait(id);
		expect(w.outcome).toBe("question");
		expect(w.question).toMatchObject({
			kind: "approval",
			answerable: true,
			reason: null,
			app_name: "Sim Installer",
			decisions: [
				{
					decision: "accept",
					label: "Run it once",
					warning:
						"The script comes from the network; the provider flagged possible prompt injection.",
				},
				{
					decision: "accept_for_session",
					label: "Allow for this session",
					warning: null,
				},
				{ decision: "decline", label: "Do not run it", warning: null },
			],
		});
		// The same question everywhere: t3_thread shows it too.
		const thread = await callTool<{ question: Question }>(client, "t3_thread", {
			thread_id: id,
		});
		expect(thread.data.question).toEqual(w.question as Question);
		// Not offered: refused, naming what is, with the warning.
		const refused = await answer({ thread_id: id, decision: "accept_always" });
		expect(refused.isError).toBe(true);
		expect(refused.text).toContain(
			'decision: "accept_always" is not offered for this approval',
		);
		expect(refused.text).toContain(
			'"accept" (Run it once; warning: The script comes from the network',
		);
		expect(refused.text).toContain(
			'"accept_for_session" (Allow for this session)',
		);
		const sent = await answer({
			thread_id: id,
			decision: "accept_for_session",
		});
		expect([sent.isError, sent.data.status]).toEqual([false, "sent"]);
		const done = await wait(id);
		expect([done.outcome, done.message]).toEqual([
			"completed",
			"Script approved and run.",
		]);
		const responses = stack
			.sim("demo")
			.frames()
			.filter((f) => f.dir === "recv")
			.flatMap((f) => (Array.isArray(f.frame) ? f.frame : [f.frame]))
			.map((m) => (m as { payload?: Record<string, unknown> }).payload)
			.filter(
				(p) => p?.type === "runtime-request.respond" && p.threadId === id,
			);
		expect(responses.map((p) => p?.decision)).toEqual(["acceptForSession"]);
	});

	test("without options: accept and decline, as before", async () => {
		const id = await dispatch("approve this");
		const w = await wait(id);
		expect(w.question?.decisions).toEqual([
			{ decision: "accept", label: "Accept", warning: null },
			{ decision: "decline", label: "Decline", warning: null },
		]);
		const refused = await answer({ thread_id: id, decision: "cancel" });
		expect(refused.text).toContain(
			'T3 offers: "accept" (Accept), "decline" (Decline)',
		);
		expect((await answer({ thread_id: id, decision: "decline" })).isError).toBe(
			false,
		);
		expect((await wait(id)).message).toBe("Command declined.");
	});
});

describe("requests nobody answers here", () => {
	const cases = [
		{
			prompt: "sign in again",
			kind: "auth_refresh",
			pending: "auth_refresh",
			state: "attention",
			reason: 'must be signed in again on machine "demo"',
		},
		{
			prompt: "call a client tool",
			kind: "dynamic_tool",
			pending: "dynamic_tool",
			state: "active",
			reason: 'client-side tool "open_preview", which a T3 Code client answers',
		},
		{
			prompt: "call a client tool after restart",
			kind: "dynamic_tool",
			pending: "dynamic_tool",
			state: "attention",
			reason:
				"(the provider process that asked ended with a server restart). Nobody can answer it: stop the run with t3_interrupt",
		},
		{
			prompt: "approve after restart",
			kind: "approval",
			pending: "approval",
			state: "attention",
			reason:
				"(the provider process that asked ended with a server restart). Nobody can answer it: stop the run with t3_interrupt",
		},
	];
	for (const c of cases) {
		test(`${c.prompt}: reported once, refused, then waited through`, async () => {
			const id = await dispatch(c.prompt);
			const first = await wait(id);
			expect(first.outcome).toBe("question");
			expect(first.question).toMatchObject({
				kind: c.kind,
				answerable: false,
				dismissable: false,
			});
			expect(first.question?.reason).toContain(c.reason);
			// t3_answer refuses it with that reason, whatever is passed.
			const refused = await answer({ thread_id: id, decision: "accept" });
			expect(refused.isError).toBe(true);
			expect(refused.text).toContain("cannot be answered through t3code-mcp");
			expect(refused.text).toContain(c.reason);
			// A second wait does not return the same request at once: it times out saying so.
			const again = await callTool<Waited>(client, "t3_wait", {
				thread_id: id,
				timeout: 0,
			});
			expect(again.data.outcome).toBe("timeout");
			expect(again.text).toContain(
				`request ${first.question?.request_id} (${c.kind}) is still pending`,
			);
			const listed = await row(id);
			expect([listed?.pending, listed?.state]).toEqual([c.pending, c.state]);
			// …and returns once it resolves (a person did it elsewhere) and the run settles.
			const waiting = wait(id);
			stack.sim("demo").finishRun(id);
			const done = await waiting;
			expect(done.outcome).toBe("completed");
			await until(
				() => questionEvents(id).length > 0,
				10_000,
				"question event",
			);
			await until(
				() =>
					receiver.deliveries.some(
						(d) =>
							d.body.thread_id === id && d.body.type === "thread.completed",
					),
				10_000,
				"completed event",
			);
			const events = questionEvents(id);
			expect(events).toHaveLength(1);
			expect(
				(events[0]?.body.question as Question | undefined)?.answerable,
			).toBe(false);
		});
	}

	test("t3_threads alone tells a client tool call nobody can answer (attention) from one a T3 client answers (active)", async () => {
		// Listed before any t3_wait or t3_thread read the projection: the listing reads it once.
		const stuck = await dispatch("call a client tool after restart");
		const live = await dispatch("call a client tool");
		const listed = async (state: string) =>
			(
				await callTool<{ threads: Row[] }>(client, "t3_threads", {
					state,
					limit: 200,
				})
			).data.threads.filter(
				(t) => t.thread_id === stuck || t.thread_id === live,
			);
		let both: Row[] = [];
		await until(
			async () => {
				both = (await listed("all")).filter(
					(t) => t.pending === "dynamic_tool",
				);
				return both.length === 2;
			},
			10_000,
			"both tool calls pending",
		);
		expect(Object.fromEntries(both.map((t) => [t.thread_id, t.state]))).toEqual(
			{ [stuck]: "attention", [live]: "active" },
		);
		// The state filter agrees with the rows.
		expect((await listed("attention")).map((t) => t.thread_id)).toEqual([
			stuck,
		]);
		expect((await listed("active")).map((t) => t.thread_id)).toEqual([live]);
		for (const id of [stuck, live]) {
			expect((await wait(id)).outcome).toBe("question");
			const waiting = wait(id);
			stack.sim("demo").finishRun(id);
			expect((await waiting).outcome).toBe("completed");
		}
		expect((await listed("attention")).map((t) => t.thread_id)).toEqual([]);
	});

	test("the pre-release engine: plain approvals still answer with accept and decline", async () => {
		const id = await dispatch("approve this", "old");
		const w = await wait(id);
		expect(w.question?.decisions?.map((d) => d.decision)).toEqual([
			"accept",
			"decline",
		]);
		expect((await answer({ thread_id: id, decision: "accept" })).isError).toBe(
			false,
		);
		expect((await wait(id)).message).toBe("Command approved and run.");
	});

	test("the pre-release engine: an approval with options offers plain accept and decline, and they work", async () => {
		const id = await dispatch("approve with options", "old");
		const w = await wait(id);
		expect([w.question?.decisions, w.question?.app_name]).toEqual([
			[
				{ decision: "accept", label: "Accept", warning: null },
				{ decision: "decline", label: "Decline", warning: null },
			],
			null,
		]);
		const refused = await answer({
			thread_id: id,
			decision: "accept_for_session",
		});
		expect(refused.text).toContain(
			'decision: "accept_for_session" is not offered for this approval',
		);
		expect((await answer({ thread_id: id, decision: "accept" })).isError).toBe(
			false,
		);
		expect((await wait(id)).message).toBe("Script approved and run.");
	});
});
