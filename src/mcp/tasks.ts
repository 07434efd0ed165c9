/**
 * The server side of the MCP Tasks extension (`io.modelcontextprotocol/tasks`, the ext-tasks
 * specification 2026-07-28); the SDK has none. A request declares the extension in its own
 * `_meta` client capabilities (never inherited from an earlier request); only then do `t3_wait`
 * and a waiting `t3_dispatch` answer with a task handle, and only then are `tasks/get`,
 * `tasks/update` and `tasks/cancel` served. The tasks themselves are src/tasks.
 */
import {
	type CallToolResult,
	type McpServer,
	MissingRequiredClientCapabilityError,
	ProtocolError,
	type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Services } from "../services.ts";
import type { DetailedTask, TaskSpec } from "../tasks/task-service.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
/** The tools that may answer with a task. */
export const TASK_TOOLS = new Set(["t3_wait", "t3_dispatch"]);

const INVALID_PARAMS = -32602;

/** Whether this request's own client capabilities declare the Tasks extension. */
export function declaresTasks(ctx: ServerContext): boolean {
	const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
	return hasTasksExtension(envelope?.[CLIENT_CAPABILITIES]);
}

export function hasTasksExtension(capabilities: unknown): boolean {
	const extensions = (capabilities as { extensions?: unknown } | undefined)
		?.extensions as Record<string, unknown> | undefined;
	const value = extensions?.[TASKS_EXTENSION];
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

const missingCapability = () =>
	new MissingRequiredClientCapabilityError(
		{ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
		"Missing required client capability: declare the io.modelcontextprotocol/tasks extension in this request's client capabilities",
	);

const notFound = (verb: string) =>
	new ProtocolError(
		INVALID_PARAMS,
		`Failed to ${verb} task: Task not found (unknown, expired, or no longer visible here)`,
	);

const TaskIdParams = z.looseObject({ taskId: z.string().min(1).max(200) });

/** The handle a `tools/call` answers with (`CreateTaskResult`). */
function createTaskResult(task: DetailedTask): CallToolResult {
	const { result: _none, ...handle } = task;
	return { resultType: "task", ...handle } as unknown as CallToolResult;
}

/** A 2026-07-28 `DetailedTask`: its tool result carries that era's `resultType`. */
export function modernTask(task: DetailedTask): DetailedTask {
	return task.result
		? { ...task, result: { ...task.result, resultType: "complete" } }
		: task;
}

const isTaskHandle = (result: unknown) =>
	(result as { resultType?: unknown } | undefined)?.resultType === "task";

/** Lists the extension and serves the task methods on one request's server. */
export function installTasks(server: McpServer, services: Services): void {
	server.server.registerCapabilities({
		extensions: { [TASKS_EXTENSION]: {} },
	} as Parameters<typeof server.server.registerCapabilities>[0]);
	// A task handle carries no structured content: the SDK's output check is for results only.
	const sdk = server as unknown as {
		validateToolOutput?: (
			tool: unknown,
			result: unknown,
			name: string,
		) => Promise<void>;
	};
	const check = sdk.validateToolOutput?.bind(server);
	if (!check)
		throw new Error(
			"@modelcontextprotocol/server changed: McpServer.validateToolOutput is gone (src/mcp/tasks.ts)",
		);
	sdk.validateToolOutput = async (tool, result, name) => {
		if (!isTaskHandle(result)) await check(tool, result, name);
	};

	server.server.setRequestHandler(
		"tasks/get",
		{ params: TaskIdParams },
		(params, ctx) => {
			if (!declaresTasks(ctx)) throw missingCapability();
			const task = services.tasks.get(params.taskId);
			if (!task) throw notFound("retrieve");
			return modernTask(task) as never;
		},
	);
	server.server.setRequestHandler(
		"tasks/cancel",
		{ params: TaskIdParams },
		(params, ctx) => {
			if (!declaresTasks(ctx)) throw missingCapability();
			if (!services.tasks.cancel(params.taskId)) throw notFound("cancel");
			return {} as never;
		},
	);
	// These tasks never ask for input; an update for a known task is acknowledged and ignored.
	server.server.setRequestHandler(
		"tasks/update",
		{ params: TaskIdParams },
		(params, ctx) => {
			if (!declaresTasks(ctx)) throw missingCapability();
			if (!services.tasks.get(params.taskId)) throw notFound("update");
			return {} as never;
		},
	);
}

/** What a tool handler gets to answer with a task, when this request may have one. */
export function taskContext(
	toolName: string,
	ctx: ServerContext,
	services: Services,
): { create(spec: TaskSpec): Promise<CallToolResult> } | undefined {
	if (!TASK_TOOLS.has(toolName) || !declaresTasks(ctx)) return undefined;
	return {
		create: async (spec) => createTaskResult(await services.tasks.create(spec)),
	};
}
