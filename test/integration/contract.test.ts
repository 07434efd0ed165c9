/**
 * Pins the public contract: every tool's schema as clients list it, and the shape of every
 * tool's structuredContent (keys and value types, ids replaced). A change shows up in review
 * as a snapshot diff; refresh with `bun test --update-snapshots`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { callTool, type Stack, startStack } from "../helpers/stack.ts";

/** Replaces every value by its type, keeping the structure (first element of arrays). */
function shapeOf(value: unknown): unknown {
	if (value === null) return "null";
	if (Array.isArray(value)) return value.length ? [shapeOf(value[0])] : [];
	if (typeof value === "object") {
		return Object.fromEntries(
			Object.entries(value as Record<string, unknown>)
				.sort(([a], [b]) => a.localeCompare(b))
				.map(([k, v]) => [k, shapeOf(v)]),
		);
	}
	return typeof value;
}

let stack: Stack;
beforeAll(async () => {
	stack = await startStack();
});
afterAll(async () => {
	await stack.stop();
});

test("tool schemas (legacy era listing)", async () => {
	const client = await stack.client();
	const { tools } = await client.listTools();
	expect(tools.map((t) => t.name)).toEqual([
		"t3_machines",
		"t3_projects",
		"t3_project_add",
		"t3_models",
		"t3_dispatch",
		"t3_wait",
		"t3_thread",
		"t3_answer",
		"t3_interrupt",
		"t3_watch",
		"t3_threads",
		"t3_manage",
		"t3_delete",
		"t3_diff",
		"t3_usage",
	]);
	for (const tool of tools) {
		expect({
			name: tool.name,
			title: tool.title,
			description: tool.description,
			inputSchema: tool.inputSchema,
			outputSchema: tool.outputSchema,
			annotations: tool.annotations,
		}).toMatchSnapshot(tool.name);
	}
});

test("instructions and descriptions lead t3_machines → t3_projects / t3_models → t3_dispatch → t3_wait", async () => {
	const client = await stack.client();
	const lines = (client.getInstructions() ?? "").split("\n");
	expect(lines[0]).toContain("t3_machines → t3_projects (t3_models");
	// The tools that find and organise threads are named together, in one line.
	const others = ["t3_threads", "t3_diff", "t3_manage", "t3_delete"];
	const naming = lines.filter((l) => others.some((name) => l.includes(name)));
	expect(naming).toHaveLength(1);
	for (const name of others) expect(naming[0]).toContain(name);

	const { tools } = await client.listTools();
	const description = (name: string) =>
		tools.find((t) => t.name === name)?.description ?? "";
	for (const next of ["t3_projects", "t3_models", "t3_dispatch"])
		expect(description("t3_machines")).toContain(next);
	expect(description("t3_projects")).toContain("t3_dispatch");
	expect(description("t3_models")).toContain("t3_dispatch");
	expect(description("t3_dispatch")).toContain("t3_wait");
	// Wherever a thread id goes in, the model learns it can find one with t3_threads.
	for (const tool of tools) {
		const arg = (
			tool.inputSchema.properties as
				| Record<string, { description?: string }>
				| undefined
		)?.thread_id;
		if (arg && tool.name !== "t3_wait" && tool.name !== "t3_watch")
			expect([tool.name, arg.description]).toEqual([
				tool.name,
				expect.stringContaining("t3_threads"),
			]);
	}
});

test("the modern era lists the same tools", async () => {
	const legacy = await (await stack.client()).listTools();
	const modern = await (await stack.client({ era: "modern" })).listTools();
	expect(modern.tools.map((t) => [t.name, t.inputSchema])).toEqual(
		legacy.tools.map((t) => [t.name, t.inputSchema]),
	);
});

test("result shapes of every tool", async () => {
	const client = await stack.client({
		headers: { "X-Conversation-Origin": "conv-shapes" },
	});
	const shapes: Record<string, unknown> = {};
	const take = async (name: string, args: Record<string, unknown>) => {
		const result = await callTool(client, name, args);
		expect(result.isError).toBe(false);
		expect(JSON.parse(result.text.split("\n")[0] as string)).toEqual(
			result.data,
		);
		return result.data;
	};
	shapes.t3_machines = shapeOf(await take("t3_machines", {}));
	shapes.t3_usage = shapeOf(await take("t3_usage", {}));
	shapes.t3_projects = shapeOf(await take("t3_projects", { machine: "demo" }));
	shapes.t3_models = shapeOf(await take("t3_models", { machine: "demo" }));
	shapes.t3_project_add = shapeOf(
		await take("t3_project_add", {
			machine: "demo",
			path: "/srv/t3/added",
			create: true,
		}),
	);
	const d = (await take("t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt: "ask me something",
	})) as {
		thread_id: string;
	};
	shapes.t3_dispatch = shapeOf(d);
	shapes["t3_wait (question)"] = shapeOf(
		await take("t3_wait", { thread_id: d.thread_id, timeout: 20 }),
	);
	shapes["t3_thread (question pending)"] = shapeOf(
		await take("t3_thread", { thread_id: d.thread_id }),
	);
	shapes.t3_answer = shapeOf(
		await take("t3_answer", {
			thread_id: d.thread_id,
			answers: { color: "Blue" },
		}),
	);
	shapes["t3_wait (completed)"] = shapeOf(
		await take("t3_wait", { thread_id: d.thread_id, timeout: 20 }),
	);
	shapes.t3_thread = shapeOf(
		await take("t3_thread", { thread_id: d.thread_id }),
	);
	shapes.t3_interrupt = shapeOf(
		await take("t3_interrupt", { thread_id: d.thread_id }),
	);
	shapes["t3_watch (change)"] = shapeOf(
		await take("t3_watch", { thread_id: d.thread_id, enabled: false }),
	);
	shapes["t3_watch (list)"] = shapeOf(await take("t3_watch", {}));
	shapes.t3_threads = shapeOf(await take("t3_threads", {}));
	shapes.t3_diff = shapeOf(await take("t3_diff", { thread_id: d.thread_id }));
	shapes.t3_manage = shapeOf(
		await take("t3_manage", { thread_id: d.thread_id, action: "settle" }),
	);
	shapes.t3_delete = shapeOf(
		await take("t3_delete", { thread_id: d.thread_id }),
	);
	expect(shapes).toMatchSnapshot();
});

test("Tasks public names (CONTRACT.md Tasks)", async () => {
	const modern = await stack.client({ era: "modern" });
	const caps = modern.getServerCapabilities() as {
		extensions?: Record<string, unknown>;
	};
	expect(Object.keys(caps.extensions ?? {})).toContain(
		"io.modelcontextprotocol/tasks",
	);
	const legacy = await stack.client();
	expect((legacy.getServerCapabilities() as { tasks?: unknown }).tasks).toEqual(
		{ cancel: {}, requests: { tools: { call: {} } } },
	);
	const { tools } = await legacy.listTools();
	const tasked = tools
		.filter((t) => t.execution?.taskSupport === "optional")
		.map((t) => t.name);
	expect(tasked).toEqual(["t3_dispatch", "t3_wait"]);
	const dispatch = tools.find((t) => t.name === "t3_dispatch");
	const properties = (dispatch?.inputSchema.properties ?? {}) as Record<
		string,
		{ type?: string }
	>;
	expect(properties.wait?.type).toBe("boolean");
	expect(legacy.getInstructions()).toContain("wait: true");
	const metrics = await (await fetch(`${stack.server.url}/metrics`)).text();
	for (const status of ["working", "completed", "cancelled", "failed"])
		expect(metrics).toContain(`t3code_mcp_tasks{status="${status}"}`);
	const { HELP } = await import("../../src/cli/help.ts");
	expect(HELP).toContain("T3CODE_MCP_TASK_TTL_S");
});
