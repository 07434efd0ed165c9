/**
 * The server side of the MCP Tasks extension (`io.modelcontextprotocol/tasks`, the ext-tasks
 * specification 2026-07-28); the SDK has none. A request declares the extension in its own
 * `_meta` client capabilities (never inherited from an earlier request); only then do `t3_wait`
 * and a waiting `t3_dispatch` answer with a task handle, and only then are `tasks/get`,
 * `tasks/update` and `tasks/cancel` served. The 2025-11-25 core form (SEP-1686) is served too,
 * over HTTP: a `tools/call` carrying `params.task` gets `{task}`, and `tasks/get`,
 * `tasks/result` (blocking) and `tasks/cancel` answer in that era's shapes. The tasks
 * themselves are src/tasks.
 */
import {
	type CallToolResult,
	type McpServer,
	MissingRequiredClientCapabilityError,
	ProtocolError,
	type RegisteredTool,
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

/** A 2025-11-25 `Task`. */
function legacyTask(task: DetailedTask) {
	return {
		taskId: task.taskId,
		status: task.status,
		...(task.statusMessage === undefined
			? {}
			: { statusMessage: task.statusMessage }),
		createdAt: task.createdAt,
		lastUpdatedAt: task.lastUpdatedAt,
		ttl: task.ttlMs,
		...(task.pollIntervalMs === undefined
			? {}
			: { pollInterval: task.pollIntervalMs }),
	};
}

const isTaskHandle = (result: unknown) => {
	const r = result as { resultType?: unknown; task?: unknown } | undefined;
	return (
		r?.resultType === "task" || (typeof r?.task === "object" && r.task !== null)
	);
};

/** 2025-11-25 `tools/call` requests that asked for a task (`params.task`), by HTTP request. */
const legacyTaskRequests = new WeakSet<Request>();

/** Notes a 2025-era `tools/call` that carries `params.task` (the body is parsed once, app.ts). */
export function noteLegacyTaskRequest(
	request: Request,
	message: unknown,
): void {
	const m = message as {
		method?: unknown;
		params?: { task?: unknown; _meta?: Record<string, unknown> };
	} | null;
	if (
		m?.method === "tools/call" &&
		typeof m.params?.task === "object" &&
		m.params.task !== null &&
		m.params._meta?.[CLIENT_CAPABILITIES] === undefined
	)
		legacyTaskRequests.add(request);
}

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** Lists the extension and serves the task methods on one request's server. */
export function installTasks(
	server: McpServer,
	services: Services,
	era: "modern" | "legacy",
	registered: Map<string, RegisteredTool>,
): void {
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
	if (era === "legacy") installLegacy(server, services, registered);
	else installModern(server, services);
}

function installModern(server: McpServer, services: Services): void {
	server.server.registerCapabilities({
		extensions: { [TASKS_EXTENSION]: {} },
	} as Parameters<typeof server.server.registerCapabilities>[0]);
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

/** The 2025-11-25 form: `capabilities.tasks`, `execution.taskSupport`, `tasks/result`. */
function installLegacy(
	server: McpServer,
	services: Services,
	registered: Map<string, RegisteredTool>,
): void {
	server.server.registerCapabilities({
		tasks: { cancel: {}, requests: { tools: { call: {} } } },
	} as Parameters<typeof server.server.registerCapabilities>[0]);
	for (const name of TASK_TOOLS) {
		const tool = registered.get(name);
		if (tool) tool.execution = { taskSupport: "optional" };
	}
	server.server.setRequestHandler(
		"tasks/get",
		{ params: TaskIdParams },
		(params) => {
			const task = services.tasks.get(params.taskId);
			if (!task) throw notFound("retrieve");
			return legacyTask(task) as never;
		},
	);
	server.server.setRequestHandler(
		"tasks/cancel",
		{ params: TaskIdParams },
		(params) => {
			if (!services.tasks.cancel(params.taskId)) throw notFound("cancel");
			const task = services.tasks.get(params.taskId);
			if (!task) throw notFound("cancel");
			return legacyTask(task) as never;
		},
	);
	// Blocks until the task ends (2025-11-25), then answers with the tool's result.
	server.server.setRequestHandler(
		"tasks/result",
		{ params: TaskIdParams },
		async (params, ctx) => {
			const taskId = params.taskId;
			const first = services.tasks.get(taskId);
			if (!first) throw notFound("retrieve");
			const ended = await new Promise<DetailedTask | undefined>((resolve) => {
				if (first.status !== "working") return resolve(first);
				const signal = ctx.mcpReq.signal;
				const done = (task: DetailedTask | undefined) => {
					stop();
					signal.removeEventListener("abort", onAbort);
					resolve(task);
				};
				const onAbort = () => done(undefined);
				const stop = services.tasks.listen(taskId, (task) => {
					if (task?.status !== "working") done(task);
				});
				signal.addEventListener("abort", onAbort, { once: true });
				// A change between the first read and the listener.
				const now = services.tasks.get(taskId);
				if (now && now.status !== "working") done(now);
			});
			if (!ended) throw notFound("retrieve");
			if (ended.status !== "completed" || !ended.result)
				throw new ProtocolError(
					INVALID_PARAMS,
					`Task ${taskId} was ${ended.status}: it has no result. ${ended.statusMessage ?? ""}`.trim(),
				);
			const result = ended.result as { _meta?: Record<string, unknown> };
			return {
				...result,
				_meta: { ...result._meta, [RELATED_TASK]: { taskId } },
			} as never;
		},
	);
}

/** What a tool handler gets to answer with a task, when this request may have one. */
export function taskContext(
	toolName: string,
	ctx: ServerContext,
	services: Services,
	era: "modern" | "legacy",
): { create(spec: TaskSpec): Promise<CallToolResult> } | undefined {
	if (!TASK_TOOLS.has(toolName)) return undefined;
	if (era === "legacy") {
		const req = ctx.http?.req;
		if (!req || !legacyTaskRequests.has(req)) return undefined;
		return {
			create: async (spec) =>
				({
					task: legacyTask(await services.tasks.create(spec)),
					// The SDK checks every tools/call body as a CallToolResult, and refuses one with
					// `task` and no `content`; a requester reads `task` (CreateTaskResult) and
					// ignores the rest.
					content: [],
				}) as unknown as CallToolResult,
		};
	}
	if (!declaresTasks(ctx)) return undefined;
	return {
		create: async (spec) => createTaskResult(await services.tasks.create(spec)),
	};
}
