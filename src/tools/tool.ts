/**
 * The shape of one MCP tool: its public definition (name, title, description, schemas,
 * annotations) beside a thin handler. `src/mcp/server.ts` registers the list.
 */
import type {
	CallToolResult,
	ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { ClientConfig } from "../config/types.ts";
import type { Services } from "../services.ts";
import type { AuditVia } from "../store/audit.ts";
import type { TaskSpec } from "../tasks/task-service.ts";
import type { ThreadReadAhead } from "../threads/read/read-ahead.ts";

export interface ToolContext {
	/** The caller: its rights and reach (src/rights). */
	client: ClientConfig;
	/** The caller's `X-Conversation-Origin` header, or null. */
	origin: string | null;
	/** How the call came (MCP over HTTP or stdio), as the audit records it. */
	via?: AuditVia;
	/** Aborts when the client goes away (2026 era) or the server shuts down. */
	signal: AbortSignal;
	/** Present when the client asked for progress (sent a progress token). */
	progress?: (message: string) => Promise<void>;
	/** The thread read started when this request arrived (`t3_thread`), if any. */
	readAhead?: ThreadReadAhead;
	/**
	 * Present when this request declared the MCP Tasks extension: `create` makes a task and
	 * returns the task handle to answer the call with.
	 */
	tasks?: { create(spec: TaskSpec): Promise<CallToolResult> };
}

export interface ToolDefinition<
	I extends z.ZodObject = z.ZodObject,
	O extends z.ZodObject = z.ZodObject,
> {
	name: string;
	title: string;
	description: string;
	inputSchema: I;
	outputSchema: O;
	annotations: ToolAnnotations;
	handler(
		args: z.infer<I>,
		ctx: ToolContext,
		services: Services,
	): Promise<CallToolResult>;
}

/** Keeps each tool's handler typed by its own schema while the list stays homogeneous. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
	tool: ToolDefinition<I, O>,
): ToolDefinition {
	return tool as unknown as ToolDefinition;
}
