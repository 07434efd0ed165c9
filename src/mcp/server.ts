/**
 * Builds the MCP server for one request (stateless: a fresh instance per HTTP request, as
 * `createMcpHandler` wants) and adapts each tool: origin header, abort signal, progress,
 * and expected failures turned into `isError` results.
 */
import {
	type CallToolResult,
	type ListToolsResult,
	McpServer,
	type RegisteredTool,
	type ServerContext,
} from "@modelcontextprotocol/server";
import { OPEN_CALLER } from "../config/clients.ts";
import type { ClientConfig } from "../config/types.ts";
import { servicesForClient } from "../rights/for-client.ts";
import { RightsError } from "../rights/refusal.ts";
import {
	auditRow,
	forClient,
	isAudited,
	mayList,
	refusal,
} from "../rights/tool-rights.ts";
import type { Services } from "../services.ts";
import type { AuditVia } from "../store/audit.ts";
import { T3Error } from "../t3/machine-api.ts";
import { ThreadError } from "../threads/errors.ts";
import { tools } from "../tools/index.ts";
import type { ToolContext, ToolDefinition } from "../tools/tool.ts";
import { maskCredentials, maskSecrets } from "../util/redact.ts";
import { cachedSchema } from "./cached-schema.ts";
import { takeReadAhead } from "./read-ahead.ts";
import { ToolFailure, toolError } from "./result.ts";
import { installTasks, taskContext } from "./tasks.ts";

const SERVER_NAME = "t3code-mcp";

/**
 * `client`: the caller (its rights and reach); `method`: the JSON-RPC method of the request
 * when known; `via`: how the calls come, for the audit. A client sees in `tools/list` only the
 * tools its level allows; a call to another still reaches our handler, which refuses it naming
 * the level it needs (`capability_denied`), over HTTP and over stdio alike (one instance there
 * serves every request, so tools are hidden from the listing, never disabled).
 */
export function buildServer(
	base: Services,
	era: "modern" | "legacy" = "modern",
	client: ClientConfig = OPEN_CALLER,
	method?: string,
	/** A `tools/call`'s tool: the only one registered (a call reaches no other). */
	toolName?: string,
	via: AuditVia = "mcp",
): McpServer {
	const services = servicesForClient(base, client);
	const server = new McpServer(
		{ name: SERVER_NAME, version: services.version },
		{
			instructions:
				"Runs coding agents on remote T3 Code machines. Typical loop: t3_machines → t3_projects (t3_models for another model, plan mode or model options) → t3_dispatch (returns a thread_id at once) → t3_wait → t3_answer if it asks a question → t3_wait again → t3_thread to read details.\nTo be woken instead of blocking: t3_dispatch with wait: true dispatches and waits in one call. A client with MCP Tasks (io.modelcontextprotocol/tasks) gets a task at once for it and for t3_wait, completed when the run finishes or asks a question, so it can do other work meanwhile; without Tasks, wait: true blocks like t3_wait. Use wait: true when you would call t3_wait right after dispatching.\nAlso: t3_threads finds existing threads on every machine; t3_diff shows what a run changed; t3_manage renames, archives, settles or stops a thread; t3_delete removes one.",
		},
	);
	// A call needs its own tool only: registering all twenty for every request was a tenth of a
	// small call's CPU. A call naming no known tool gets them all (the SDK's own error for it).
	const called =
		method === "tools/call" && toolName !== undefined
			? toolsByName.get(toolName)
			: undefined;
	const registered = new Map(
		(called ? [called] : tools).map((tool) => [
			tool.name,
			register(server, tool, services, era, client, via),
		]),
	);
	if (method !== "tools/call") listOnlyMayList(server, client);
	installTasks(server, services, era, registered);
	return server;
}

/**
 * `tools/list` shows the client only the tools it may call. The SDK lists the enabled tools and
 * answers a call of a disabled one with a protocol error (-32602) before our handler runs, so
 * nothing is disabled: its listing is filtered instead, and every call reaches the rights check
 * and the audit.
 */
function listOnlyMayList(server: McpServer, client: ClientConfig): void {
	// A full-access client may call every tool: nothing to filter.
	if (tools.every((tool) => mayList(client, tool.name))) return;
	const sdk = server.server as unknown as {
		_getRequestHandler?: (
			method: string,
		) => ((request: unknown, ctx: unknown) => Promise<unknown>) | undefined;
	};
	const list = sdk._getRequestHandler?.call(server.server, "tools/list");
	if (!list)
		throw new Error(
			"@modelcontextprotocol/server changed: Protocol._getRequestHandler is gone (src/mcp/server.ts)",
		);
	server.server.setRequestHandler("tools/list", async (request, ctx) => {
		const listed = (await list(request, ctx)) as ListToolsResult;
		return {
			...listed,
			tools: listed.tools.filter((tool) => mayList(client, tool.name)),
		};
	});
}

/**
 * Whether the SDK re-checks each tool result against its output schema. The results are built
 * by our own code, the contract tests pin their shapes and the official client checks them
 * against the listed schema, so outside tests the check only costs (for `t3_thread`, about a
 * tenth of what the tool adds to its GET). Under `bun test` it stays on, so a shape bug fails there.
 */
const CHECK_RESULTS = process.env.NODE_ENV === "test";

const toolsByName = new Map(tools.map((tool) => [tool.name, tool]));

/** Per tool, the schemas with their JSON Schema conversion cached across requests. */
const schemas = new Map(
	tools.map((tool) => [
		tool.name,
		{
			input: cachedSchema(tool.inputSchema),
			output: cachedSchema(tool.outputSchema, { check: CHECK_RESULTS }),
		},
	]),
);

function register(
	server: McpServer,
	tool: ToolDefinition,
	services: Services,
	era: "modern" | "legacy",
	client: ClientConfig,
	via: AuditVia,
): RegisteredTool {
	return server.registerTool(
		tool.name,
		{
			title: tool.title,
			description: tool.description,
			inputSchema: schemas.get(tool.name)?.input,
			outputSchema: schemas.get(tool.name)?.output,
			annotations: tool.annotations,
		},
		async (args: unknown, ctx: ServerContext) => {
			const context = toolContext(ctx, client);
			context.via = via;
			const tasks = taskContext(tool.name, ctx, services, era);
			if (tasks) context.tasks = tasks;
			const started = performance.now();
			const given = (args ?? {}) as Record<string, unknown>;
			const audited = isAudited(tool.name, given);
			const done = (outcome: { result: CallToolResult } | { code: string }) => {
				const row = auditRow(
					client,
					tool.name,
					given,
					outcome,
					services.threadDeps.now(),
					via,
				);
				if (audited) services.audit.record(row);
				services.metrics.toolCall(client.name, tool.name, row.result);
				// One line per call for the operator: who, what, where, how it ended, how long;
				// never the arguments' text (prompts, answers) nor a token.
				services.log.info("tool call", {
					client: client.name,
					tool: tool.name,
					...callPlace(given, "result" in outcome ? outcome.result : undefined),
					result: row.result,
					ms: Math.round(performance.now() - started),
					origin: context.origin,
				});
			};
			const refused = refusal(client, tool.name, given);
			if (refused) {
				done({ code: refused.code });
				return toolError(refused.message);
			}
			try {
				const result = forClient(
					client,
					await tool.handler(args as never, context, services),
				);
				done({ result });
				return result;
			} catch (error) {
				done({
					code: error instanceof RightsError ? error.code : "error",
				});
				// These messages may quote a T3 server (already redacted where it was captured);
				// masking again here keeps a future call site from leaking a secret.
				if (
					error instanceof ToolFailure ||
					error instanceof ThreadError ||
					error instanceof T3Error
				)
					return toolError(maskCredentials(error.message));
				if (isStorageError(error)) {
					services.log.error("state database write failed", {
						tool: tool.name,
						error,
					});
					return toolError(
						`The connector cannot write its state database (${(error as Error).message}): free space or fix permissions at ${services.config.server.statePath}. Nothing was sent to T3.`,
					);
				}
				services.log.error("tool failed", { tool: tool.name, error });
				return toolError(
					`${tool.name} failed unexpectedly; the server log has the details.`,
				);
			}
		},
	);
}

function toolContext(ctx: ServerContext, client: ClientConfig): ToolContext {
	const origin =
		ctx.http?.req?.headers.get("x-conversation-origin")?.trim() || null;
	const token = ctx.mcpReq._meta?.progressToken;
	let count = 0;
	return {
		client,
		origin,
		signal: ctx.mcpReq.signal,
		readAhead: takeReadAhead(ctx.http?.req),
		progress:
			token === undefined
				? undefined
				: async (message: string) => {
						count += 1;
						await ctx.mcpReq.notify({
							method: "notifications/progress",
							params: {
								progressToken: token,
								progress: count,
								// Progress lines quote T3 (the latest message).
								message: maskSecrets(message),
							},
						});
					},
	};
}

/** Longest machine name or thread id a log line quotes (both are ids, but come from callers). */
const PLACE_CHARS = 80;

/**
 * The machine and thread a call was about, for its log line: from the result when it names
 * them (a placed dispatch, a new thread), else from the arguments; null when neither does.
 */
export function callPlace(
	args: Record<string, unknown>,
	result: CallToolResult | undefined,
): { machine: string | null; thread: string | null } {
	const shaped = (result?.structuredContent ?? {}) as Record<string, unknown>;
	const first = (...values: unknown[]) => {
		const found = values.find((v) => typeof v === "string" && v !== "");
		return typeof found === "string" ? found.slice(0, PLACE_CHARS) : null;
	};
	const ids = Array.isArray(args.thread_ids) ? args.thread_ids : [];
	return {
		machine: first(shaped.machine, args.machine),
		thread: first(shaped.thread_id, args.thread_id, ids[0]),
	};
}

/** sqlite could not write (full disk, read-only file, I/O error). */
function isStorageError(error: unknown): boolean {
	const code = (error as { code?: unknown })?.code;
	return (
		error instanceof Error &&
		error.name === "SQLiteError" &&
		typeof code === "string" &&
		/^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|BUSY)/.test(code)
	);
}
