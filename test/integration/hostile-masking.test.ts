/**
 * Secrets never leave, whatever T3 sends (CONTRACT.md "HTTP"): against the hostile simulator
 * (src/sim/wire/hostile.ts), which echoes the bearer it sees into every title, message, question,
 * option, tool title, diff and error text, straddling every cut the connector makes, and
 * streams a message whose updates end with growing pieces of it. Every tool's result, the
 * progress lines, /healthz, `check`, the log, the webhook bodies an append-only receiver got
 * and the state file's bytes hold no piece of 5+ characters of it; a webhook receiver replying
 * with the hook's secrets has them masked in /healthz and the log. Ordinary code in a message
 * (`Authorization: \`Bearer ${token}\``) comes through unchanged.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { runCheck } from "../../src/cli/check.ts";
import { HOSTILE_CODE } from "../../src/sim/wire/hostile.ts";
import { createLogger } from "../../src/util/log.ts";
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
} from "../helpers/stack.ts";
import { rawRequest } from "../helpers/tasks-client.ts";

/** Machine bearers with no word in them, so a 5-character piece cannot occur by chance. */
const EVIL_TOKEN = "Hx7Qz-Kp2Lw9Vn4Tb8Rm3Jc6Yd5Fs1Ga0";
const SLOW_TOKEN = "Wq3Er-Ty6Ui9Op2As5Df8Gh1Jk4Lz7Xc0";
const INBOUND_TOKEN = "Mn4Bv-Cx7Za1Sd9Fg3Hj6Kl2Qw8Er5Ty0";
const HOOK_TOKEN = "Pl9Ok-Mi8Nj7Ub6Hy5Gt4Rf3Ed2Ws1Qa0";
const HOOK_PATH = "Zx1Cv2Bn3Mq4Wf5Ep6Rt7Yu8";
const HOOK_QUERY = "Io9Uy8Tr7Ew6Qa5Sd4";
const PROJECT = "/srv/t3/demo";

const BEARERS = [EVIL_TOKEN, SLOW_TOKEN];
const ALL_SECRETS = [
	...BEARERS,
	INBOUND_TOKEN,
	HOOK_TOKEN,
	HOOK_PATH,
	HOOK_QUERY,
	TEST_SECRET,
	TEST_SECRET.slice("whsec_".length),
];

/** Every 5-character piece of each secret is absent from `text`; no marker grew. */
function expectNoPiece(text: string, secrets = ALL_SECRETS): void {
	expect(text).not.toContain(`${MASK}]`);
	expectNoSecretPiece(text, secrets);
}

let receiver: Receiver;
let stack: Stack;
let client: Client;
const logs: string[] = [];
/** Every tool result and progress line, by tool. */
const outputs = new Map<string, string[]>();

async function call<T = Record<string, unknown>>(
	name: string,
	args: Record<string, unknown> = {},
) {
	const progress: string[] = [];
	const result = await callTool<T>(client, name, args, {
		onprogress: (p) => progress.push(JSON.stringify(p)),
	});
	const seen = outputs.get(name) ?? [];
	seen.push(result.text, JSON.stringify(result.data), ...progress);
	outputs.set(name, seen);
	return result;
}

interface WaitResult {
	outcome: string;
	message: string | null;
	error: string | null;
	question: {
		request_id: string;
		prompt: string;
		questions: { id: string; options: string[] }[];
	} | null;
}

async function dispatchAndWait(
	prompt: string,
	extra: Record<string, unknown> = {},
	machine = "evil",
) {
	const d = await call<{ thread_id: string }>("t3_dispatch", {
		machine,
		project: PROJECT,
		prompt,
		...extra,
	});
	expect(d.isError).toBe(false);
	const w = await call<WaitResult>("t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 30,
	});
	return { threadId: d.data.thread_id, wait: w.data };
}

beforeAll(async () => {
	receiver = startReceiver();
	// The receiver first refuses, quoting every secret of the hook (its reply is outside text).
	receiver.setMode({
		status: 400,
		body: `bad signature; got Authorization: Bearer ${HOOK_TOKEN} for /in/${HOOK_PATH}?sig=${HOOK_QUERY}, secret ${TEST_SECRET}`,
	});
	stack = await startStack({
		machines: [
			{
				name: "evil",
				token: EVIL_TOKEN,
				sim: { hostile: true, token: EVIL_TOKEN },
			},
			{
				name: "slow",
				token: SLOW_TOKEN,
				sim: { hostile: true, token: SLOW_TOKEN, stepMs: 250 },
			},
		],
		server: {
			token: INBOUND_TOKEN,
			hookUrl: `${receiver.url}/in/${HOOK_PATH}?sig=${HOOK_QUERY}`,
			hookToken: HOOK_TOKEN,
			hookSecret: TEST_SECRET,
			logLevel: "debug",
		},
		progressIntervalMs: 100,
		retryScheduleS: [0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05],
		log: createLogger("debug", (line) => logs.push(line)),
	});
	client = await stack.client();
	await untilMachineOnline(client, "evil");
	await untilMachineOnline(client, "slow");
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
});

describe("the hostile simulator echoes the bearer into everything it sends", () => {
	test("machines, projects and models", async () => {
		await call("t3_machines");
		const projects = await call<{ projects: { title: string }[] }>(
			"t3_projects",
			{ machine: "evil" },
		);
		expect(projects.data.projects[0]?.title).toStartWith(`demo ${MASK}`);
		const models = await call("t3_models", { machine: "evil" });
		expect(models.isError).toBe(false);
		// The project T3 answers with (its title echoed with the bearer) comes back masked.
		const added = await call<{ project: { title: string } }>("t3_project_add", {
			machine: "evil",
			path: "/srv/t3/hostile-added",
			create: true,
		});
		expect(added.isError).toBe(false);
		expect(added.data.project.title).toStartWith(`hostile-added ${MASK}`);
	}, 30_000);

	test("messages straddling every cap, at every position, in t3_dispatch, t3_wait and t3_thread", async () => {
		// One thread, one run per position of the bearer around the caps (the hostile text puts
		// (prompt length) mod (bearer length − 1) + 1 of its characters before each cut).
		let threadId: string | undefined;
		for (let k = 0; k < EVIL_TOKEN.length - 1; k++) {
			const d = await call<{ thread_id: string }>("t3_dispatch", {
				...(threadId
					? { thread_id: threadId }
					: { machine: "evil", project: PROJECT }),
				prompt: `say hello ${"x".repeat(k)}`,
			});
			expect(d.isError).toBe(false);
			threadId = d.data.thread_id;
			const w = await call<WaitResult>("t3_wait", {
				thread_id: threadId,
				timeout: 30,
			});
			expect(w.data.outcome).toBe("completed");
			expect(w.data.message).toContain(MASK);
			// Ordinary code is not a credential: not touched.
			expect(w.data.message).toContain(HOSTILE_CODE);
		}
		// 1 run: 8 000-character caps; 8 runs: 2 000; all of them: 500.
		for (const turns of [1, 8, 20]) {
			const t = await call<{
				title: string;
				runs: { messages: { role: string; text: string }[] }[];
			}>("t3_thread", { thread_id: threadId, turns });
			expect(t.isError).toBe(false);
			expect(t.data.title).toContain(MASK);
			const texts = t.data.runs.flatMap((r) => r.messages.map((m) => m.text));
			expect(texts.some((x) => x.includes("…[truncated]"))).toBe(true);
			if (turns < 20)
				expect(texts.some((x) => x.includes(HOSTILE_CODE))).toBe(true);
		}
	}, 30_000);

	test("a question and its options; the answer by its masked label", async () => {
		const { threadId, wait } = await dispatchAndWait("ask me");
		expect(wait.outcome).toBe("question");
		const question = wait.question;
		expect(question?.questions[0]?.options[0]).toBe(`Red ${MASK}`);
		await call("t3_thread", { thread_id: threadId });
		await call("t3_threads", { state: "attention" });
		const answered = await call("t3_answer", {
			thread_id: threadId,
			answers: { color: question?.questions[0]?.options[0] },
		});
		expect(answered.isError).toBe(false);
		const done = await call<WaitResult>("t3_wait", {
			thread_id: threadId,
			timeout: 30,
		});
		// The masked label named the real option: the agent got its value.
		expect(done.data.message).toStartWith("You chose red.");
	}, 30_000);

	test("an approval's prompt", async () => {
		const { threadId, wait } = await dispatchAndWait("approve this", {
			runtime_mode: "approval-required",
		});
		expect(wait.outcome).toBe("question");
		await call("t3_answer", { thread_id: threadId, decision: "accept" });
		const done = await call<WaitResult>("t3_wait", {
			thread_id: threadId,
			timeout: 30,
		});
		expect(done.data.outcome).toBe("completed");
	}, 30_000);

	test("a tool's whole output (item_id), T3's notices and a usage limit", async () => {
		const { threadId } = await dispatchAndWait("run a failing command");
		const read = await call<{
			runs: { tools: { item_id: string; exit_code: number | null }[] }[];
		}>("t3_thread", { thread_id: threadId });
		const tool = read.data.runs[0]?.tools.find((t) => t.exit_code === 1);
		const item = await call<{ item: { output: string | null } | null }>(
			"t3_thread",
			{ thread_id: threadId, item_id: tool?.item_id },
		);
		expect(item.isError).toBe(false);
		expect(item.data.item?.output).toContain("…[truncated]");
		// A short output gets the bearer straddling every cut: masked wherever it is cut.
		const hello = await dispatchAndWait("say hello");
		const helloRead = await call<{
			runs: { tools: { item_id: string; output_omitted: boolean }[] }[];
		}>("t3_thread", { thread_id: hello.threadId });
		const ls = helloRead.data.runs[0]?.tools.find((t) => t.output_omitted);
		const lsItem = await call<{ item: { output: string | null } | null }>(
			"t3_thread",
			{ thread_id: hello.threadId, item_id: ls?.item_id },
		);
		expect(lsItem.data.item?.output).toContain(MASK);
		const background = await dispatchAndWait("start a background task");
		stack.sim("evil").finishRun(background.threadId);
		const notices = await call<{
			runs: { notices: { text: string }[] }[];
		}>("t3_thread", { thread_id: background.threadId, turns: 2 });
		expect(JSON.stringify(notices.data.runs)).toContain(MASK);
		const limited = await dispatchAndWait("hit the usage limit");
		expect(limited.wait.error).toContain(MASK);
	}, 30_000);

	test("run errors straddling the 200 and 500 cuts at many positions", async () => {
		for (let i = 0; i < 8; i++) {
			const { threadId, wait } = await dispatchAndWait("fail now");
			expect(wait.outcome).toBe("failed");
			expect(wait.error).toContain(MASK);
			expect(wait.error?.length).toBeLessThanOrEqual(500);
			await call("t3_thread", { thread_id: threadId });
		}
	}, 30_000);

	test("diffs, paged", async () => {
		const small = await dispatchAndWait("edit a file");
		const diff = await call<{ diff: string }>("t3_diff", {
			thread_id: small.threadId,
		});
		expect(diff.data.diff).toContain(`+// ${MASK}`);
		expect(diff.data.diff).toContain(`+${HOSTILE_CODE}`);
		const big = await dispatchAndWait("big edit");
		let cursor: string | null = null;
		let pages = 0;
		do {
			const page: { data: { next_cursor: string | null } } = await call(
				"t3_diff",
				{ thread_id: big.threadId, ...(cursor ? { cursor } : {}) },
			);
			cursor = page.data.next_cursor;
			pages += 1;
		} while (cursor);
		expect(pages).toBeGreaterThan(1);
	}, 30_000);

	test("interrupt, watch, threads, manage (and its refusals), delete", async () => {
		const d = await call<{ thread_id: string }>("t3_dispatch", {
			machine: "evil",
			project: PROJECT,
			prompt: "long task",
		});
		const threadId = d.data.thread_id;
		await until(
			async () =>
				(
					await call<{ latest_run: { status: string } | null }>("t3_thread", {
						thread_id: threadId,
					})
				).data.latest_run?.status === "running",
			10_000,
			"the long task to run",
		);
		// T3 refuses to archive a working thread: its refusal is an error body.
		const refused = await call("t3_manage", {
			thread_id: threadId,
			action: "archive",
		});
		expect(refused.isError).toBe(true);
		await call("t3_interrupt", { thread_id: threadId });
		await call("t3_wait", { thread_id: threadId, timeout: 30 });
		await call("t3_watch");
		await call("t3_watch", { thread_id: threadId, enabled: false });
		await call("t3_watch", { thread_id: threadId, enabled: true });
		await call("t3_threads");
		await call("t3_threads", { query: "long" });
		const renamed = await call<{ title: string }>("t3_manage", {
			thread_id: threadId,
			action: "rename",
			title: "renamed",
		});
		expect(renamed.isError).toBe(false);
		for (const action of ["archive", "unarchive", "settle", "unsettle"])
			await call("t3_manage", { thread_id: threadId, action });
		const deleted = await call("t3_delete", { thread_id: threadId });
		expect(deleted.isError).toBe(false);
	}, 30_000);

	test("an attachment whose reference T3 answers with the bearer in its name", async () => {
		const { wait } = await dispatchAndWait("hello with a file", {
			attachments: [
				{
					name: "notes.txt",
					mime_type: "text/plain",
					data: Buffer.from("some notes").toString("base64"),
				},
			],
		});
		expect(wait.outcome).toBe("completed");
		// What the state file then holds is scanned below, table by table.
	}, 30_000);

	test("a message split across stream updates: progress lines while it streams, the text it stopped at", async () => {
		const d = await call<{ thread_id: string }>("t3_dispatch", {
			machine: "slow",
			project: PROJECT,
			prompt: "slow stream",
		});
		const threadId = d.data.thread_id;
		// Interrupted while streaming, the run's message is the text so far, which ends with a
		// piece of the bearer (hostile.ts).
		let interrupted: Promise<unknown> | undefined;
		const progress: string[] = [];
		const wait = await callTool<WaitResult>(
			client,
			"t3_wait",
			{ thread_id: threadId, timeout: 30 },
			{
				onprogress: (p) => {
					const line = JSON.stringify(p);
					progress.push(line);
					if (!interrupted && line.includes("Streaming"))
						interrupted = call("t3_interrupt", { thread_id: threadId });
				},
			},
		);
		await interrupted;
		outputs.get("t3_wait")?.push(wait.text, ...progress);
		expect(progress.some((l) => l.includes("latest: Streaming"))).toBe(true);
		expect(wait.data.outcome).toBe("interrupted");
		expect(wait.data.message).toStartWith("Streaming");
		expect(wait.data.message).toEndWith(MASK);
		expect(wait.data.message).not.toContain(HOSTILE_CODE);
	}, 30_000);
});

describe("tasks", () => {
	test("a waiting dispatch answered with a task: its status line and result (tasks/get)", async () => {
		const bearer = INBOUND_TOKEN;
		const mcpUrl = stack.server.mcpUrl;
		const called = await rawRequest(
			mcpUrl,
			"tools/call",
			{
				name: "t3_dispatch",
				arguments: {
					machine: "slow",
					project: PROJECT,
					prompt: "say hello as a task",
					wait: true,
				},
			},
			{ bearer },
		);
		expect(called.kind).toBe("result");
		const seen: string[] = [JSON.stringify(called)];
		const taskId = (
			called as { result: { task?: { taskId: string }; taskId?: string } }
		).result;
		const id = taskId.task?.taskId ?? taskId.taskId;
		expect(typeof id).toBe("string");
		let status = "working";
		await until(
			async () => {
				const got = await rawRequest(
					mcpUrl,
					"tasks/get",
					{ taskId: id },
					{ bearer },
				);
				seen.push(JSON.stringify(got));
				status = got.kind === "result" ? String(got.result.status) : "error";
				return status !== "working";
			},
			20_000,
			"the task to complete",
		);
		expect(status).toBe("completed");
		const all = seen.join("\n");
		expect(all).toContain(MASK);
		expectNoPiece(all);
		outputs.set("tasks", seen);
	}, 30_000);
});

describe("no piece of a secret anywhere", () => {
	test("in every tool's results and progress lines", () => {
		for (const tool of [
			"t3_machines",
			"t3_projects",
			"t3_project_add",
			"t3_models",
			"t3_dispatch",
			"t3_thread",
			"t3_wait",
			"t3_answer",
			"t3_interrupt",
			"t3_watch",
			"t3_threads",
			"t3_manage",
			"t3_delete",
			"t3_diff",
		]) {
			const seen = outputs.get(tool) ?? [];
			expect(seen.length).toBeGreaterThan(0);
			expectNoPiece(seen.join("\n"));
		}
	}, 30_000);

	test("in /healthz, including the receiver's refusal quoting the hook's secrets", async () => {
		let lastError = "";
		await until(
			async () => {
				const response = await fetch(`${stack.server.url}/healthz`, {
					headers: { authorization: `Bearer ${INBOUND_TOKEN}` },
				});
				const text = await response.text();
				expectNoPiece(text);
				lastError =
					(JSON.parse(text) as { outbox: { last_error?: string } }).outbox
						.last_error ?? "";
				return lastError.includes("bad signature");
			},
			10_000,
			"a refused delivery",
		);
		expect(lastError).toContain(`/in/${MASK}?sig=${MASK}`);
	}, 30_000);

	test("in the webhook bodies delivered", async () => {
		receiver.setMode("ok");
		await until(
			() => receiver.deliveries.length >= 5,
			20_000,
			"deliveries once the receiver accepts",
		);
		const raw = receiver.deliveries.map((d) => d.raw).join("\n");
		expect(raw).toContain(MASK);
		expectNoPiece(raw);
		expect(receiver.deliveries.every((d) => d.verified)).toBe(true);
	}, 30_000);

	test("in the log", () => {
		expect(logs.some((l) => l.includes("bad signature"))).toBe(true);
		expectNoPiece(logs.join("\n"));
	}, 30_000);

	test("in check, as text and --json", async () => {
		writeFileSync(
			join(stack.dir, "check.toml"),
			[
				"[machines.evil]",
				`url = "${stack.sim("evil").url}"`,
				'token_env = "T3_EVIL_TOKEN"',
				'projects = ["*"]',
			].join("\n"),
		);
		for (const argv of [[], ["--json"]]) {
			let out = "";
			await runCheck(argv, {
				env: {
					T3CODE_MCP_CONFIG: join(stack.dir, "check.toml"),
					T3CODE_MCP_STATE: join(stack.dir, "check.sqlite"),
					T3_EVIL_TOKEN: EVIL_TOKEN,
				},
				cwd: stack.dir,
				write: (t) => {
					out += t;
				},
			});
			expect(out).toContain("evil");
			expectNoPiece(out);
		}
	}, 30_000);

	test("in every column of every table of the state file", () => {
		const db = new Database(stack.statePath, { readonly: true });
		try {
			const tables = db
				.query<{ name: string }, []>(
					"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
				)
				.all()
				.map((t) => t.name);
			// The tables this session wrote T3's text to are among them (not an empty scan).
			expect(tables).toEqual(
				expect.arrayContaining([
					"threads",
					"dispatches",
					"events",
					"operations",
				]),
			);
			for (const table of tables)
				for (const row of db.query(`SELECT * FROM "${table}"`).all() as Record<
					string,
					unknown
				>[])
					for (const [column, value] of Object.entries(row))
						if (typeof value === "string")
							try {
								expectNoPiece(value);
							} catch (error) {
								throw new Error(
									`${table}.${column}: ${(error as Error).message}`,
								);
							}
		} finally {
			db.close();
		}
	}, 30_000);

	test("in the state file's bytes", () => {
		let bytes = readFileSync(stack.statePath).toString("latin1");
		if (existsSync(`${stack.statePath}-wal`))
			bytes += readFileSync(`${stack.statePath}-wal`).toString("latin1");
		expect(bytes).toContain(MASK);
		expectNoPiece(bytes);
	}, 30_000);
});
