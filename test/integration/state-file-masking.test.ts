/**
 * Nothing from T3 is stored unmasked (CONTRACT.md "HTTP", issue 26 item 15): the whole tool set
 * (a dispatch with attachments into a worktree on a named branch, wait, thread, threads with a
 * query, answer, a queue edited, cancelled, held and resumed, a steer, interrupt, fork, manage,
 * watch, delete and a task) runs against the hostile simulator, which echoes its bearer, the
 * connector's own bearer and the webhook's token and secret into every text it sends (titles,
 * messages, attachment names, branch names, snippets, errors). The state file is then opened
 * with bun:sqlite and every column of every table (found in sqlite_master, so a new table is
 * covered without a change here) holds no piece of 5+ characters of any of them; nor do the
 * file's bytes.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import type { Client } from "@modelcontextprotocol/client";
import { MASK } from "../../src/util/redact.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import { expectNoSecretPiece } from "../helpers/secret-pieces.ts";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilMachineOnline,
	untilRunning,
} from "../helpers/stack.ts";
import { rawRequest } from "../helpers/tasks-client.ts";

/** Secrets with no word in them, so a 5-character piece cannot occur by chance. */
const MACHINE_TOKEN = "Qe4Rt-Yu7Io1Pa3Sd6Fg9Hj2Kl5Zx8Cv0";
const INBOUND_TOKEN = "Bn6Mq-Wa2Zs8Xe4Dc1Rf7Vt3Gb9Yh5Nu0";
const HOOK_TOKEN = "Jm8Ik-Ol3Pq6Ws9Ed2Rc5Tv1Yb4Un7Hg0";
const HOOK_PATH = "Kf2Lg4Mh6Nj8Pk0Ql3Rm5Sn7";
const PROJECT = "/srv/t3/demo";
const SECRETS = [
	MACHINE_TOKEN,
	INBOUND_TOKEN,
	HOOK_TOKEN,
	HOOK_PATH,
	TEST_SECRET,
	TEST_SECRET.slice("whsec_".length),
];

const expectNoPiece = (text: string, where: string) =>
	expectNoSecretPiece(text, SECRETS, where);

const ATTACHMENT = {
	name: "notes.txt",
	mime_type: "text/plain",
	data: Buffer.from("some notes").toString("base64"),
};

type Dispatched = {
	thread_id: string;
	run_id: string;
	queued: boolean;
	branch: string | null;
};
type Waited = {
	outcome: string;
	run_id: string | null;
	question: { questions: { id: string; options: string[] }[] } | null;
};

let receiver: Receiver;
let stack: Stack;
let client: Client;

beforeAll(async () => {
	receiver = startReceiver();
	stack = await startStack({
		machines: [
			{
				name: "evil",
				token: MACHINE_TOKEN,
				sim: {
					token: MACHINE_TOKEN,
					// T3 could have been told the connector's other secrets: it echoes those too.
					hostile: {
						echo: [INBOUND_TOKEN, HOOK_TOKEN, HOOK_PATH, TEST_SECRET],
					},
				},
			},
		],
		server: {
			token: INBOUND_TOKEN,
			hookUrl: `${receiver.url}/in/${HOOK_PATH}`,
			hookToken: HOOK_TOKEN,
			hookSecret: TEST_SECRET,
		},
		retryScheduleS: [0.05, 0.05, 0.05],
	});
	client = await stack.client();
	await untilMachineOnline(client, "evil");
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

async function call<T = Record<string, unknown>>(
	name: string,
	args: Record<string, unknown>,
) {
	const result = await callTool<T>(client, name, args);
	expect([name, result.isError, result.text]).toEqual([
		name,
		false,
		expect.any(String),
	]);
	return result.data;
}

const dispatch = (args: Record<string, unknown>) =>
	call<Dispatched>(
		"t3_dispatch",
		args.thread_id || args.fork_of
			? args
			: { machine: "evil", project: PROJECT, ...args },
	);
const wait = (threadId: string) =>
	call<Waited>("t3_wait", { thread_id: threadId, timeout: 30 });

let first = "";

describe("the whole tool set against a T3 that echoes every secret", () => {
	test("a dispatch with an attachment into a worktree on a named branch, its wait and reads", async () => {
		const d = await dispatch({
			prompt: "say hello",
			workspace: "worktree",
			branch: "fix/echo",
			attachments: [ATTACHMENT],
			idempotency_key: "first-dispatch",
		});
		first = d.thread_id;
		expect((await wait(first)).outcome).toBe("completed");
		const read = await call<{ title: string; branch: string | null }>(
			"t3_thread",
			{ thread_id: first },
		);
		// T3's texts came back with the secrets in them, masked.
		expect(read.title).toContain(MASK);
		expect(read.branch).toContain(MASK);
		await call("t3_threads", {});
		await call("t3_threads", { query: "hello" });
		await call("t3_diff", { thread_id: first });
	}, 30_000);

	test("a question answered", async () => {
		const d = await dispatch({ prompt: "ask me" });
		const asked = await wait(d.thread_id);
		expect(asked.outcome).toBe("question");
		const question = asked.question?.questions[0];
		await call("t3_answer", {
			thread_id: d.thread_id,
			answers: { [question?.id ?? "color"]: question?.options[0] },
		});
		expect((await wait(d.thread_id)).outcome).toBe("completed");
	}, 30_000);

	test("a long task steered, a queue behind it edited and cancelled, held by an interrupt, resumed", async () => {
		const busy = await dispatch({ prompt: "long task" });
		const thread = busy.thread_id;
		await untilRunning(client, thread);
		await dispatch({ thread_id: thread, prompt: "also this", mode: "steer" });
		const kept = await dispatch({
			thread_id: thread,
			prompt: "first follow-up",
			attachments: [ATTACHMENT],
		});
		const dropped = await dispatch({
			thread_id: thread,
			prompt: "second follow-up",
		});
		expect([kept.queued, dropped.queued]).toEqual([true, true]);
		await call("t3_manage", {
			thread_id: thread,
			action: "edit_queued",
			run_id: kept.run_id,
			prompt: "say hello after",
		});
		await call("t3_manage", {
			thread_id: thread,
			action: "cancel_queued",
			run_id: dropped.run_id,
			idempotency_key: "cancel-second",
		});
		await call("t3_interrupt", {
			thread_id: thread,
			hold_queue: true,
		});
		await call("t3_manage", { thread_id: thread, action: "resume_queue" });
		// The interrupted run may be what a first wait reports; the edited follow-up completes.
		let w: Waited | undefined;
		for (let i = 0; i < 3 && w?.run_id !== kept.run_id; i++)
			w = await wait(thread);
		expect(w).toMatchObject({ outcome: "completed", run_id: kept.run_id });
	}, 30_000);

	test("a fork of the first thread, and its wait", async () => {
		const fork = await dispatch({
			fork_of: first,
			prompt: "say hello again",
			idempotency_key: "the-fork",
		});
		expect((await wait(fork.thread_id)).outcome).toBe("completed");
		await call("t3_thread", { thread_id: fork.thread_id });
	}, 30_000);

	test("manage, watch and delete", async () => {
		const d = await dispatch({ prompt: "say hello" });
		await wait(d.thread_id);
		await call("t3_manage", {
			thread_id: d.thread_id,
			action: "rename",
			title: "renamed",
			idempotency_key: "rename",
		});
		for (const action of ["archive", "unarchive", "settle", "unsettle"])
			await call("t3_manage", { thread_id: d.thread_id, action });
		await call("t3_watch", { thread_id: d.thread_id, enabled: false });
		await call("t3_watch", { thread_id: d.thread_id, enabled: true });
		await call("t3_watch", {});
		await call("t3_delete", { thread_id: d.thread_id });
	}, 30_000);

	test("a waiting dispatch answered with a task, read to its end", async () => {
		const mcpUrl = stack.server.mcpUrl;
		const called = await rawRequest(
			mcpUrl,
			"tools/call",
			{
				name: "t3_dispatch",
				arguments: {
					machine: "evil",
					project: PROJECT,
					prompt: "say hello as a task",
					attachments: [ATTACHMENT],
					wait: true,
				},
			},
			{ bearer: INBOUND_TOKEN },
		);
		expect(called.kind).toBe("result");
		const result = (
			called as { result: { task?: { taskId: string }; taskId?: string } }
		).result;
		const taskId = result.task?.taskId ?? result.taskId;
		expect(typeof taskId).toBe("string");
		let status = "working";
		await until(
			async () => {
				const got = await rawRequest(
					mcpUrl,
					"tasks/get",
					{ taskId },
					{ bearer: INBOUND_TOKEN },
				);
				status = got.kind === "result" ? String(got.result.status) : "error";
				return status !== "working";
			},
			20_000,
			"the task to complete",
		);
		expect(status).toBe("completed");
	}, 30_000);
});

describe("the state file", () => {
	test("every column of every table: T3's texts are there, masked, with no piece of a secret", async () => {
		// Every event the runs made is recorded (and delivered) before the file is read.
		await until(
			() => receiver.types().includes("thread.completed"),
			10_000,
			"a delivered event",
		);
		const db = new Database(stack.statePath, { readonly: true });
		try {
			const tables = db
				.query<{ name: string }, []>(
					"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
				)
				.all()
				.map((t) => t.name);
			const masked = new Set<string>();
			for (const table of tables)
				for (const row of db.query(`SELECT * FROM "${table}"`).all() as Record<
					string,
					unknown
				>[])
					for (const [column, value] of Object.entries(row)) {
						const text =
							typeof value === "string"
								? value
								: value instanceof Uint8Array
									? Buffer.from(value).toString("latin1")
									: undefined;
						if (text === undefined) continue;
						expectNoPiece(text, `${table}.${column}`);
						if (text.includes(MASK)) masked.add(`${table}.${column}`);
					}
			// Not an empty scan: what T3 echoed reached these columns, and only masked.
			expect([...masked]).toEqual(
				expect.arrayContaining([
					"threads.title",
					"dispatches.payload",
					"events.body",
					"operations.result",
					"tasks.result",
				]),
			);
			// The attachment reference T3 answered with: its echoed name is stored masked.
			const payloads = db
				.query<{ payload: string }, []>("SELECT payload FROM dispatches")
				.all()
				.map((r) => r.payload)
				.filter((p) => p.includes("notes.txt"));
			expect(payloads.length).toBeGreaterThan(0);
			expect(payloads.some((p) => p.includes(`"notes.txt ${MASK}`))).toBe(true);
		} finally {
			db.close();
		}
	}, 30_000);

	test("the file's bytes, its write-ahead log included", () => {
		let bytes = readFileSync(stack.statePath).toString("latin1");
		if (existsSync(`${stack.statePath}-wal`))
			bytes += readFileSync(`${stack.statePath}-wal`).toString("latin1");
		expect(bytes).toContain(MASK);
		expectNoPiece(bytes, "the state file");
	}, 30_000);
});
