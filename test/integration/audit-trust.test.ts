/**
 * Trust round three's audit and /metrics (CONTRACT.md "Trust round three"), over HTTP with the
 * official client against the simulator: an id or key holding a newline, an ANSI escape or
 * U+202E is printed escaped by `t3code-mcp audit` and forges no line; long values are cut with
 * `…`; `audit --json` rows carry `via` and `detail`; `/metrics` answers full-access clients only.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { ClientConfig } from "../../src/config/types.ts";
import { createAuditStore } from "../../src/store/audit.ts";
import { openDb } from "../../src/store/db.ts";
import {
	callTool,
	connectClient,
	type Stack,
	startStack,
	testClient,
	untilMachinesOnline,
} from "../helpers/stack.ts";

const ENTRY = join(import.meta.dir, "../../src/index.ts");

const TOKENS = {
	agent: "agent-token-01234567890",
	ops: "ops-token-0123456789012",
};

const client = (name: keyof typeof TOKENS, rights: Partial<ClientConfig>) =>
	testClient(name, TOKENS[name], rights);

/** A line as the table prints another client's delete, to be smuggled in an id or key. */
const FORGED = "2026-01-01T00:00:00.000Z  ops     t3_delete  ok";
const EVIL_THREAD = `t_evil\n${FORGED}\u001b[2K\u202e`;
const EVIL_KEY = `key\r\n${FORGED}\u001b]0;title\u0007\u202eyek`;
/** The longest key a call may carry (ID_MAX). */
const LONG_KEY = `long-${"x".repeat(195)}`;
/** Raw control and bidi characters: none may reach the terminal. */
const RAW = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
/** Every line of the output is free of them (the newlines ending lines are the table's own). */
const clean = (out: string) =>
	out
		.trimEnd()
		.split("\n")
		.every((line) => !RAW.test(line));

let stack: Stack;
const as: Record<string, Client> = {};

beforeAll(async () => {
	stack = await startStack({
		clients: [
			client("agent", { access: "approval-required", approve: false }),
			client("ops", { access: "full-access", approve: true }),
		],
	});
	for (const name of Object.keys(TOKENS) as (keyof typeof TOKENS)[])
		as[name] = await connectClient(stack.server.mcpUrl, {
			authorization: `Bearer ${TOKENS[name]}`,
		});
	await untilMachinesOnline(as.ops as Client);
});
afterAll(async () => {
	for (const c of Object.values(as)) await c.close();
	await stack?.stop();
});

/** `t3code-mcp audit` on a state file. */
function audit(statePath: string, ...args: string[]) {
	const config = join(stack.dir, `audit-${Math.random()}.toml`);
	writeFileSync(config, `[server]\nstate = ${JSON.stringify(statePath)}\n`);
	const run = Bun.spawnSync(["bun", ENTRY, "audit", ...args], {
		env: { ...process.env, T3CODE_MCP_CONFIG: config },
	});
	expect(run.exitCode, run.stderr.toString()).toBe(0);
	return run.stdout.toString();
}

const jsonRows = (out: string) =>
	out
		.trim()
		.split("\n")
		.map((l) => JSON.parse(l) as Record<string, unknown>);

describe("audit injection", () => {
	beforeAll(async () => {
		const agent = as.agent as Client;
		const deleted = await callTool(agent, "t3_delete", {
			thread_id: EVIL_THREAD,
			idempotency_key: EVIL_KEY,
		});
		expect(deleted.text).toStartWith("capability_denied:");
		const followUp = await callTool(agent, "t3_dispatch", {
			thread_id: EVIL_THREAD,
			prompt: "say hello",
			idempotency_key: LONG_KEY,
		});
		expect(followUp.isError).toBe(true);
	});

	test("the table shows ESC, newline and U+202E escaped and prints no forged line", () => {
		const out = audit(stack.statePath);
		expect(clean(out)).toBe(true);
		const lines = out.trimEnd().split("\n");
		expect(lines[0]).toStartWith("at ");
		// One line per row, each its own client's: none starts like the smuggled one.
		expect(lines.length).toBe(
			1 + jsonRows(audit(stack.statePath, "--json")).length,
		);
		for (const line of lines.slice(1)) {
			expect(line).toMatch(/^\d{4}-\d{2}-\d{2}T\S+Z {2}(agent|ops) /);
			expect(line).not.toStartWith("2026-01-01T00:00:00.000Z");
		}
		const deleteLine = lines.find((l) => l.includes(" t3_delete "));
		expect(deleteLine).toContain(" agent ");
		expect(deleteLine).toContain("capability_denied");
		expect(deleteLine).toContain("t_evil\\n2026-01-01T00:00:00.000Z");
		expect(deleteLine).toContain("key\\r\\n2026-01-01");
		// Both are longer than the width: cut.
		expect(deleteLine).toContain("…");
	});

	test("escapes inside the width are shown as \\u001b and \\u202e", async () => {
		const r = await callTool(as.agent as Client, "t3_delete", {
			thread_id: "t_\u001b[31m\u202e\n",
		});
		expect(r.text).toStartWith("capability_denied:");
		const text = audit(stack.statePath, "--client", "agent");
		expect(text).toContain("t_\\u001b[31m\\u202e\\n");
		expect(clean(text)).toBe(true);
	});

	test("the longest key a call may carry is cut with …; --json has it whole", () => {
		const table = audit(stack.statePath);
		expect(table).not.toContain(LONG_KEY);
		expect(table).toContain(`${LONG_KEY.slice(0, 39)}…`);
		const rows = jsonRows(audit(stack.statePath, "--json"));
		expect(rows.some((r) => r.idempotency_key === LONG_KEY)).toBe(true);
		expect(rows.some((r) => r.thread_id === EVIL_THREAD)).toBe(true);
		expect(rows.some((r) => r.idempotency_key === EVIL_KEY)).toBe(true);
	});

	test("10 KB values in a state file are cut with … and escaped", () => {
		const path = join(stack.dir, "big.sqlite");
		const db = openDb(path);
		const big = `${"\u202e\n".repeat(2_000)}${"k".repeat(6_000)}`;
		createAuditStore(db, 90).record({
			at: Date.now(),
			client: "agent",
			tool: "t3_dispatch",
			machine: big,
			project_id: big,
			thread_id: big,
			run_id: big,
			result: "error",
			idempotency_key: big,
			detail: null,
			via: "mcp",
		});
		db.close();
		const out = audit(path);
		const lines = out.trimEnd().split("\n");
		expect(lines.length).toBe(2);
		expect(lines[1]).not.toMatch(RAW);
		expect(lines[1]?.length).toBeLessThan(400);
		expect(lines[1]).toContain(`${"\\u202e\\n".repeat(4)}\\u202e…`);
		const [row] = jsonRows(audit(path, "--json"));
		expect(row?.idempotency_key).toBe(big);
	});
});

describe("audit --json rows carry via and detail", () => {
	test("approval decisions and t3_manage actions are named; other calls have detail null", async () => {
		const ops = as.ops as Client;
		const ask = async () => {
			const d = await callTool<{ thread_id: string }>(ops, "t3_dispatch", {
				machine: "demo",
				project: "demo",
				prompt: "run a command",
				runtime_mode: "approval-required",
			});
			expect(d.isError, d.text).toBe(false);
			const w = await callTool<{ outcome: string }>(ops, "t3_wait", {
				thread_id: d.data.thread_id,
				timeout: 20,
			});
			expect(w.data.outcome).toBe("question");
			return d.data.thread_id;
		};
		const accepted = await ask();
		expect(
			(
				await callTool(ops, "t3_answer", {
					thread_id: accepted,
					decision: "accept",
				})
			).isError,
		).toBe(false);
		const declined = await ask();
		expect(
			(
				await callTool(ops, "t3_answer", {
					thread_id: declined,
					decision: "decline",
				})
			).isError,
		).toBe(false);
		for (const id of [accepted, declined])
			await callTool(ops, "t3_wait", { thread_id: id, timeout: 20 });
		const archived = await callTool(ops, "t3_manage", {
			thread_id: accepted,
			action: "archive",
		});
		expect(archived.isError, archived.text).toBe(false);

		const rows = jsonRows(audit(stack.statePath, "--json", "--client", "ops"));
		for (const row of rows)
			expect(Object.keys(row).sort()).toEqual(
				[
					"at",
					"client",
					"detail",
					"idempotency_key",
					"machine",
					"project_id",
					"result",
					"run_id",
					"thread_id",
					"tool",
					"via",
				].sort(),
			);
		expect(rows.every((r) => r.via === "mcp")).toBe(true);
		const find = (tool: string, thread: string) =>
			rows.find((r) => r.tool === tool && r.thread_id === thread);
		expect(find("t3_answer", accepted)).toMatchObject({
			detail: "accept",
			result: "ok",
		});
		expect(find("t3_answer", declined)).toMatchObject({
			detail: "decline",
			result: "ok",
		});
		expect(find("t3_manage", accepted)).toMatchObject({
			detail: "archive",
			result: "ok",
		});
		expect(find("t3_dispatch", accepted)?.detail).toBeNull();
		// The table shows them too.
		const table = audit(stack.statePath, "--client", "ops");
		expect(table.split("\n")[0]).toMatch(/ detail +via /);
		expect(table).toMatch(/ t3_manage +ok +archive +mcp /);
	});
});

describe("/metrics", () => {
	const get = (token?: string) =>
		fetch(new URL("/metrics", stack.server.mcpUrl), {
			headers: token ? { authorization: `Bearer ${token}` } : {},
		});

	test("an approval-required client gets 403 saying it needs full access", async () => {
		const res = await get(TOKENS.agent);
		expect(res.status).toBe(403);
		const body = await res.text();
		expect(body).toContain("full-access");
		expect(body).not.toContain("t3code_mcp_");
	});

	test("a full-access client gets the metrics; no bearer stays 401", async () => {
		const res = await get(TOKENS.ops);
		expect(res.status).toBe(200);
		expect(await res.text()).toContain("t3code_mcp_tool_calls_total");
		expect((await get()).status).toBe(401);
		expect((await get("nobody-has-this-token-0")).status).toBe(401);
	});
});
