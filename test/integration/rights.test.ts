/**
 * Clients and rights (CONTRACT.md "Clients and rights") over HTTP with the official client,
 * against the simulator over real sockets: each client's bearer, its reach, its level (tools,
 * runtime modes), the approver right on a real approval, `max_active_runs`, tasks and keys per
 * client, and the audit of allowed and refused calls.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { ClientConfig } from "../../src/config/types.ts";
import {
	callTool,
	connectClient,
	demoMachine,
	type Stack,
	startStack,
	testClient,
	untilMachinesOnline,
} from "../helpers/stack.ts";
import { rawRequest } from "../helpers/tasks-client.ts";

const ENTRY = join(import.meta.dir, "../../src/index.ts");

const TOKENS = {
	reader: "reader-token-0123456789",
	agent: "agent-token-01234567890",
	human: "human-token-01234567890",
	ops: "ops-token-0123456789012",
};

const client = (name: keyof typeof TOKENS, rights: Partial<ClientConfig>) =>
	testClient(name, TOKENS[name], { approve: false, ...rights });

let stack: Stack;
const as: Record<string, Client> = {};
const url = () => stack.server.mcpUrl;

beforeAll(async () => {
	stack = await startStack({
		machines: [
			demoMachine(
				[
					["web", "/srv/t3/web"],
					["secret", "/srv/t3/secret"],
				],
				["*"],
			),
		],
		clients: [
			client("reader", { access: "read-only" }),
			client("agent", {
				access: "approval-required",
				projects: ["web"],
				maxActiveRuns: 1,
			}),
			client("human", { access: "read-only", approve: true }),
			client("ops", { access: "full-access", approve: true }),
		],
	});
	for (const name of Object.keys(TOKENS) as (keyof typeof TOKENS)[])
		as[name] = await connectClient(url(), {
			authorization: `Bearer ${TOKENS[name]}`,
		});
	await untilMachinesOnline(as.ops as Client);
});
afterAll(async () => {
	for (const c of Object.values(as)) await c.close();
	await stack?.stop();
});

const names = async (c: Client) =>
	(await c.listTools()).tools.map((t) => t.name).sort();

describe("authentication", () => {
	test("no bearer, or one no client has, is 401 on /mcp and /metrics", async () => {
		for (const path of ["/mcp", "/metrics"]) {
			const target = new URL(path, url());
			for (const authorization of [undefined, "Bearer nobody-has-this-token"]) {
				const res = await fetch(target, {
					method: path === "/mcp" ? "POST" : "GET",
					headers: {
						"content-type": "application/json",
						accept: "application/json, text/event-stream",
						...(authorization ? { authorization } : {}),
					},
					body:
						path === "/mcp"
							? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
							: undefined,
				});
				expect(res.status, `${path} ${authorization}`).toBe(401);
			}
		}
	});
});

describe("levels", () => {
	test("a read-only client lists only the read tools and is refused the others naming its level", async () => {
		const reader = as.reader as Client;
		expect(await names(reader)).toEqual([
			"t3_diff",
			"t3_machines",
			"t3_models",
			"t3_projects",
			"t3_thread",
			"t3_threads",
			"t3_usage",
			"t3_wait",
			"t3_watch",
		]);
		const refused = await callTool(reader, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "say hello",
		});
		expect(refused.isError).toBe(true);
		expect(refused.text).toStartWith("capability_denied:");
		expect(refused.text).toContain("approval-required");
		expect(refused.text).toContain('client "reader" (access read-only)');
		const watch = await callTool(reader, "t3_watch", {
			thread_id: "t_1",
			enabled: false,
		});
		expect(watch.text).toStartWith("capability_denied:");
		expect((await callTool(reader, "t3_watch")).isError).toBe(false);
		expect((await callTool(reader, "t3_machines")).isError).toBe(false);
	});

	test("a full-access client lists every tool", async () => {
		expect((await names(as.ops as Client)).length).toBe(15);
	});

	test("t3_machines shows the caller its own rights", async () => {
		const { data } = await callTool<{ client: unknown }>(
			as.agent as Client,
			"t3_machines",
		);
		expect(data.client).toEqual({
			name: "agent",
			access: "approval-required",
			approve: false,
			machines: ["*"],
			projects: ["web"],
		});
	});
});

describe("an approval-required agent", () => {
	let threadId: string;

	test("sees only the projects in its reach", async () => {
		const { data } = await callTool<{ projects: { title: string }[] }>(
			as.agent as Client,
			"t3_projects",
			{ machine: "demo" },
		);
		expect(data.projects.map((p) => p.title)).toEqual(["web"]);
		const hidden = await callTool(as.agent as Client, "t3_dispatch", {
			machine: "demo",
			project: "secret",
			prompt: "say hello",
		});
		const unknown = await callTool(as.agent as Client, "t3_dispatch", {
			machine: "demo",
			project: "no-such-project",
			prompt: "say hello",
		});
		expect(hidden.isError).toBe(true);
		expect(hidden.text).toBe(
			unknown.text.replaceAll("no-such-project", "secret"),
		);
	});

	test("an explicit full-access run is refused naming its level, and nothing reaches T3", async () => {
		const before = stack.sim("demo").threadIds().length;
		const refused = await callTool(as.agent as Client, "t3_dispatch", {
			machine: "demo",
			project: "web",
			prompt: "say hello",
			runtime_mode: "full-access",
		});
		expect(refused.isError).toBe(true);
		expect(refused.text).toStartWith("runtime_mode_escalation_denied:");
		expect(refused.text).toContain("approval-required");
		expect(stack.sim("demo").threadIds().length).toBe(before);
	});

	test("its new thread is approval-required, and it cannot approve its own command", async () => {
		const d = await callTool<{ thread_id: string; runtime_mode: string }>(
			as.agent as Client,
			"t3_dispatch",
			{ machine: "demo", project: "web", prompt: "run a command" },
		);
		expect(d.isError).toBe(false);
		expect(d.data.runtime_mode).toBe("approval-required");
		threadId = d.data.thread_id;
		const waited = await callTool<{
			outcome: string;
			question: { kind: string; answerable: boolean; reason: string } | null;
		}>(as.agent as Client, "t3_wait", { thread_id: threadId, timeout: 20 });
		expect(waited.data.outcome).toBe("question");
		expect(waited.data.question?.kind).toBe("approval");
		expect(waited.data.question?.answerable).toBe(false);
		expect(waited.data.question?.reason).toContain("approver");
		const own = await callTool(as.agent as Client, "t3_answer", {
			thread_id: threadId,
			decision: "accept",
		});
		expect(own.isError).toBe(true);
		expect(own.text).toStartWith("approval_denied:");
	});

	test("max_active_runs = 1 holds while its run waits for approval; a follow-up into it adds nothing", async () => {
		const second = await callTool(as.agent as Client, "t3_dispatch", {
			machine: "demo",
			project: "web",
			prompt: "say hello",
		});
		expect(second.isError).toBe(true);
		expect(second.text).toStartWith("max_active_runs_reached:");
		expect(second.text).toContain(threadId);
		// A message into the busy thread adds nothing (CONTRACT.md "Trust round three"): it queues.
		const followUp = await callTool<{ queued: boolean; run_id: string }>(
			as.agent as Client,
			"t3_dispatch",
			{ thread_id: threadId, prompt: "and then this" },
		);
		expect(followUp.isError).toBe(false);
		expect(followUp.data.queued).toBe(true);
		const cancelled = await callTool(as.agent as Client, "t3_manage", {
			thread_id: threadId,
			action: "cancel_queued",
			run_id: followUp.data.run_id,
		});
		expect(cancelled.isError).toBe(false);
	});

	test("an approver answers it; the run completes", async () => {
		const seen = await callTool<{ question: { answerable: boolean } | null }>(
			as.human as Client,
			"t3_thread",
			{ thread_id: threadId },
		);
		expect(seen.data.question?.answerable).toBe(true);
		expect((seen.data as { client?: string }).client).toBe("agent");
		expect((seen.data as { app_url?: string }).app_url).toBe(
			`t3-thread://v1/${threadId}`,
		);
		const answered = await callTool(as.human as Client, "t3_answer", {
			thread_id: threadId,
			decision: "accept",
		});
		expect(answered.isError).toBe(false);
		const waited = await callTool<{ outcome: string }>(
			as.agent as Client,
			"t3_wait",
			{ thread_id: threadId, timeout: 20 },
		);
		expect(waited.data.outcome).toBe("completed");
	});

	test("cannot delete", async () => {
		const refused = await callTool(as.agent as Client, "t3_delete", {
			thread_id: threadId,
		});
		expect(refused.isError).toBe(true);
		expect(refused.text).toStartWith("capability_denied:");
		expect(refused.text).toContain("full-access");
		const still = await callTool(as.ops as Client, "t3_thread", {
			thread_id: threadId,
		});
		expect(still.isError).toBe(false);
	});

	test("continuing or forking a thread above its level is refused; lowering it first is not", async () => {
		const full = await callTool<{ thread_id: string; runtime_mode: string }>(
			as.ops as Client,
			"t3_dispatch",
			{ machine: "demo", project: "web", prompt: "say hello" },
		);
		expect(full.data.runtime_mode).toBe("full-access");
		await callTool(as.ops as Client, "t3_wait", {
			thread_id: full.data.thread_id,
			timeout: 20,
		});
		const agent = as.agent as Client;
		for (const args of [
			{ thread_id: full.data.thread_id, prompt: "and then this" },
			{ thread_id: full.data.thread_id, prompt: "now", mode: "restart" },
			{ fork_of: full.data.thread_id, prompt: "fork it" },
		]) {
			const refused = await callTool(agent, "t3_dispatch", args);
			expect(refused.text, JSON.stringify(args)).toStartWith(
				"runtime_mode_escalation_denied:",
			);
			expect(refused.text).toContain('runs at "full-access"');
		}
		const lowered = await callTool<{ runtime_mode: string }>(
			agent,
			"t3_dispatch",
			{
				thread_id: full.data.thread_id,
				// No command: nothing to approve, so the run completes.
				prompt: "slow please",
				runtime_mode: "approval-required",
			},
		);
		expect(lowered.isError, lowered.text).toBe(false);
		expect(lowered.data.runtime_mode).toBe("approval-required");
		const done = await callTool<{ outcome: string }>(agent, "t3_wait", {
			thread_id: full.data.thread_id,
			timeout: 20,
		});
		expect(done.data.outcome).toBe("completed");
	});

	test("a thread outside its reach is the same error as an unknown one", async () => {
		const d = await callTool<{ thread_id: string }>(
			as.ops as Client,
			"t3_dispatch",
			{ machine: "demo", project: "secret", prompt: "say hello" },
		);
		const hidden = await callTool(as.agent as Client, "t3_thread", {
			thread_id: d.data.thread_id,
		});
		const unknown = await callTool(as.agent as Client, "t3_thread", {
			thread_id: "t_unknown",
		});
		expect(hidden.isError).toBe(true);
		expect(hidden.text).toBe(
			unknown.text.replaceAll("t_unknown", d.data.thread_id),
		);
	});
});

describe("tasks and keys are per client", () => {
	test("another client's tasks/get of a task is not found", async () => {
		const created = await rawRequest(
			url(),
			"tools/call",
			{
				name: "t3_dispatch",
				arguments: {
					machine: "demo",
					project: "demo",
					prompt: "long task",
					wait: true,
				},
			},
			{ bearer: TOKENS.ops },
		);
		if (created.kind !== "result") throw new Error(created.error.message);
		const taskId = created.result.taskId as string;
		expect(typeof taskId).toBe("string");
		const mine = await rawRequest(
			url(),
			"tasks/get",
			{ taskId },
			{
				bearer: TOKENS.ops,
			},
		);
		expect(mine.kind).toBe("result");
		const theirs = await rawRequest(
			url(),
			"tasks/get",
			{ taskId },
			{
				bearer: TOKENS.human,
			},
		);
		const unknown = await rawRequest(
			url(),
			"tasks/get",
			{ taskId: "no-such-task" },
			{ bearer: TOKENS.human },
		);
		expect(theirs.kind).toBe("error");
		expect(theirs).toEqual({ ...unknown, status: theirs.status });
	});

	test("the same idempotency key from two clients names two operations", async () => {
		const args = (prompt: string) => ({
			machine: "demo",
			project: "demo",
			prompt,
			idempotency_key: "shared-key-1",
		});
		const a = await callTool<{ thread_id: string }>(
			as.ops as Client,
			"t3_dispatch",
			args("say hello"),
		);
		const other = await connectClient(url(), {
			authorization: `Bearer ${TOKENS.ops}`,
		});
		const again = await callTool<{ thread_id: string }>(
			other,
			"t3_dispatch",
			args("say hello"),
		);
		await other.close();
		expect(again.data.thread_id).toBe(a.data.thread_id);
		const b = await callTool<{ thread_id: string }>(
			as.agent as Client,
			"t3_dispatch",
			{ ...args("say hello"), project: "web" },
		);
		// The agent's cap is taken by its earlier thread only while that one runs; it completed.
		expect(b.isError, b.text).toBe(false);
		expect(b.data.thread_id).not.toBe(a.data.thread_id);
	});
});

describe("audit", () => {
	test("allowed and refused calls are recorded with the client, never a token or prompt", async () => {
		const db = new Database(stack.statePath, { readonly: true });
		const rows = db
			.query<Record<string, string>, []>("SELECT * FROM audit ORDER BY id")
			.all();
		db.close();
		const text = JSON.stringify(rows);
		expect(
			rows.some(
				(r) =>
					r.client === "agent" &&
					r.tool === "t3_delete" &&
					r.result === "capability_denied",
			),
		).toBe(true);
		expect(
			rows.some(
				(r) =>
					r.client === "agent" &&
					r.tool === "t3_dispatch" &&
					r.result === "runtime_mode_escalation_denied",
			),
		).toBe(true);
		expect(
			rows.some(
				(r) =>
					r.client === "human" && r.tool === "t3_answer" && r.result === "ok",
			),
		).toBe(true);
		expect(
			rows.some((r) => r.client === "reader" && r.tool === "t3_machines"),
		).toBe(false);
		for (const token of Object.values(TOKENS))
			expect(text).not.toContain(token);
		expect(text).not.toContain("run a command");
		expect(text).not.toContain("say hello");
	});

	test("`t3code-mcp audit --json` names the clients and shows the refused delete, without tokens or prompts", async () => {
		const config = join(stack.dir, "audit.toml");
		writeFileSync(
			config,
			`[server]\nstate = ${JSON.stringify(stack.statePath)}\n`,
		);
		const run = (...args: string[]) =>
			Bun.spawnSync(["bun", ENTRY, "audit", ...args], {
				env: { ...process.env, T3CODE_MCP_CONFIG: config },
			});
		const json = run("--json");
		expect(json.exitCode).toBe(0);
		const out = json.stdout.toString();
		const rows = out
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l) as Record<string, string>);
		expect(new Set(rows.map((r) => r.client))).toEqual(
			new Set(["agent", "human", "ops", "reader"]),
		);
		expect(rows.find((r) => r.tool === "t3_delete")?.result).toBe(
			"capability_denied",
		);
		expect(rows[0]?.at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
		for (const token of Object.values(TOKENS)) expect(out).not.toContain(token);
		expect(out).not.toContain("say hello");
		const agent = run("--client", "agent", "--since", "1h");
		expect(agent.exitCode).toBe(0);
		const lines = agent.stdout.toString().trim().split("\n");
		expect(lines[0]).toStartWith("at ");
		expect(lines.slice(1).every((l) => l.includes(" agent "))).toBe(true);
		const bad = run("--since", "yesterday");
		expect(bad.exitCode).toBe(2);
		expect(bad.stderr.toString()).toContain("--since");
	});

	test("the per-client metric counts results", async () => {
		const res = await fetch(new URL("/metrics", url()), {
			headers: { authorization: `Bearer ${TOKENS.ops}` },
		});
		const body = await res.text();
		expect(body).toContain(
			't3code_mcp_tool_calls_total{client="agent",tool="t3_delete",result="capability_denied"} 1',
		);
	});
});

describe("questions a client may not answer", () => {
	test("a read-only client sees a user_input question as not answerable, saying who may", async () => {
		const asked = await callTool<{ thread_id: string }>(
			as.ops as Client,
			"t3_dispatch",
			{
				machine: "demo",
				project: "web",
				prompt: "ask me which color",
				runtime_mode: "approval-required",
			},
		);
		type Seen = { question: { answerable: boolean; reason: string } | null };
		const seen = async (who: Client) =>
			(
				await callTool<Seen>(who, "t3_wait", {
					thread_id: asked.data.thread_id,
					timeout: 20,
				})
			).data.question;
		const reader = await seen(as.reader as Client);
		expect(reader?.answerable).toBe(false);
		expect(reader?.reason).toContain("read-only");
		expect((await seen(as.agent as Client))?.answerable).toBe(true);
		expect((await seen(as.human as Client))?.answerable).toBe(false);
		await callTool(as.ops as Client, "t3_interrupt", {
			thread_id: asked.data.thread_id,
		});
	});
});
