/**
 * Nothing malformed reaches T3 (issue 16): for every tool, an unknown argument and an id that
 * cannot be a URL path segment are refused by name, in both MCP eras, and the simulator never
 * hears of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	callTool,
	ERAS,
	type Era,
	type Stack,
	startStack,
	until,
} from "../helpers/stack.ts";

let stack: Stack;
const clients = new Map<Era, Client>();
beforeAll(async () => {
	stack = await startStack();
	for (const era of ERAS) clients.set(era, await stack.client({ era }));
	await until(
		() =>
			stack.server.services.fleet.get("demo")?.machine.status().state ===
			"online",
		10_000,
		"demo online",
	);
});
afterAll(async () => {
	await stack.stop();
});

const client = (era: Era) => clients.get(era) as Client;

/** Valid arguments for each tool (ids made up: they are refused or not found, never run). */
const VALID_ARGS: Record<string, Record<string, unknown>> = {
	t3_machines: {},
	t3_projects: { machine: "demo" },
	t3_project_add: { machine: "demo", path: "/srv/t3/refused-add" },
	t3_models: { machine: "demo" },
	t3_dispatch: { machine: "demo", project: "demo", prompt: "hi" },
	t3_wait: { thread_id: "t-none", timeout: 0 },
	t3_thread: { thread_id: "t-none" },
	t3_answer: { thread_id: "t-none", decision: "accept" },
	t3_interrupt: { thread_id: "t-none" },
	t3_watch: {},
	t3_threads: {},
	t3_manage: { thread_id: "t-none", action: "archive" },
	t3_delete: { thread_id: "t-none" },
	t3_diff: { thread_id: "t-none" },
	t3_usage: {},
};

/** Where each tool takes an id that becomes a T3 URL path segment. */
const ID_ARGS: {
	tool: string;
	arg: string;
	args: (id: string) => Record<string, unknown>;
}[] = [
	{
		tool: "t3_dispatch",
		arg: "thread_id",
		args: (id) => ({ thread_id: id, prompt: "hi" }),
	},
	{
		tool: "t3_dispatch",
		arg: "fork_of",
		args: (id) => ({
			machine: "demo",
			project: "demo",
			prompt: "hi",
			fork_of: id,
		}),
	},
	{
		tool: "t3_dispatch",
		arg: "fork_run_id",
		args: (id) => ({
			machine: "demo",
			project: "demo",
			prompt: "hi",
			fork_of: "t-ok",
			fork_run_id: id,
		}),
	},
	{
		tool: "t3_wait",
		arg: "thread_id",
		args: (id) => ({ thread_id: id, timeout: 0 }),
	},
	{
		tool: "t3_wait",
		arg: "thread_ids.1",
		args: (id) => ({ thread_ids: ["t-ok", id], timeout: 0 }),
	},
	{ tool: "t3_thread", arg: "thread_id", args: (id) => ({ thread_id: id }) },
	{
		tool: "t3_answer",
		arg: "thread_id",
		args: (id) => ({ thread_id: id, decision: "accept" }),
	},
	{ tool: "t3_interrupt", arg: "thread_id", args: (id) => ({ thread_id: id }) },
	{
		tool: "t3_watch",
		arg: "thread_id",
		args: (id) => ({ thread_id: id, enabled: true }),
	},
	{
		tool: "t3_manage",
		arg: "thread_id",
		args: (id) => ({ thread_id: id, action: "archive" }),
	},
	{
		tool: "t3_manage",
		arg: "run_id",
		args: (id) => ({
			thread_id: "t-ok",
			action: "retry_preparation",
			run_id: id,
		}),
	},
	{ tool: "t3_delete", arg: "thread_id", args: (id) => ({ thread_id: id }) },
	{ tool: "t3_diff", arg: "thread_id", args: (id) => ({ thread_id: id }) },
	{
		tool: "t3_diff",
		arg: "run_id",
		args: (id) => ({ thread_id: "t-ok", run_id: id }),
	},
];

const BAD_IDS = ["", ".", "..", "a/b", "/", "../shell", "a\\b", "..\\x"];

/** Sim requests that carry a thread id in their path, or matched no route at all. */
function pathRequests(): Record<string, number> {
	return Object.fromEntries(
		Object.entries(stack.sim().stats().requests).filter(
			([key]) => key.includes(":id") || key.includes("(no route)"),
		),
	);
}

describe.each(ERAS)("%s era", (era) => {
	it("every tool publishes additionalProperties: false", async () => {
		const { tools } = await client(era).listTools();
		expect(tools.map((t) => t.name).sort()).toEqual(
			Object.keys(VALID_ARGS).sort(),
		);
		for (const tool of tools)
			expect([tool.name, tool.inputSchema.additionalProperties]).toEqual([
				tool.name,
				false,
			]);
	});

	it("every tool refuses an unknown argument, naming it and the valid ones", async () => {
		const { tools } = await client(era).listTools();
		for (const tool of tools) {
			const args = { ...VALID_ARGS[tool.name], runtime_mod: "plan" };
			const result = await callTool(client(era), tool.name, args);
			expect([tool.name, result.isError]).toEqual([tool.name, true]);
			expect(result.text).toContain('unknown argument "runtime_mod"');
			const valid = Object.keys(tool.inputSchema.properties ?? {});
			expect(result.text).toContain(
				`valid arguments: ${valid.join(", ") || "none"}`,
			);
		}
	});

	it("every id that would leave its URL path segment is refused by name, and nothing reaches T3", async () => {
		const before = pathRequests();
		for (const { tool, arg, args } of ID_ARGS) {
			for (const id of BAD_IDS) {
				const result = await callTool(client(era), tool, args(id));
				const what = `${tool} ${arg}=${JSON.stringify(id)}`;
				expect([what, result.isError]).toEqual([what, true]);
				expect([what, result.text]).toEqual([
					what,
					expect.stringMatching(
						new RegExp(
							`${arg.replace(".", "\\.")}: (Too small|not a valid id: (must not contain / or \\\\|"\\.\\.?" is not an id))`,
						),
					),
				]);
			}
		}
		expect(pathRequests()).toEqual(before);
	});
});

it("the state file holds nothing from the refused calls", async () => {
	const { Database } = await import("bun:sqlite");
	const db = new Database(stack.statePath, { readonly: true });
	try {
		const count = (table: string) =>
			(db.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
		expect([
			count("threads"),
			count("dispatches"),
			count("operations"),
		]).toEqual([0, 0, 0]);
	} finally {
		db.close();
	}
});
