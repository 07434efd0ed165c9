/**
 * 2025-era calls of the quick tools go out as one JSON body, not an SSE stream. The SDK's
 * stateless legacy serving always streams: the result is framed as an SSE event, copied through a
 * second stream, and the client runs it through its event parser. For `t3_machines` at 500
 * machines (a 224 KB answer) that framing was a fifth of the call. Streamable HTTP lets a server
 * answer a POST with `application/json` (the client accepts both), and these tools send no
 * notifications and answer within seconds (from memory, or one T3 read bounded at 15 s after at
 * most 5 s for a connecting machine), so the SSE keep-alive comments that hold long calls (a
 * `t3_wait`, a dispatch) open are not needed.
 */

import type { McpServer } from "@modelcontextprotocol/server";
import {
	PROTOCOL_VERSION_META_KEY,
	WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { MODERN_PROTOCOL_VERSIONS } from "./protocol-version.ts";

/** Tools that answer from what the connector holds or from one bounded T3 read. */
const QUICK_TOOLS: ReadonlySet<string> = new Set([
	"t3_machines",
	"t3_projects",
	"t3_thread",
	"t3_threads",
]);

type AuthInfo = Parameters<
	WebStandardStreamableHTTPServerTransport["handleRequest"]
>[1] extends infer O
	? O extends { authInfo?: infer A }
		? A
		: never
	: never;

/**
 * Whether this request is a 2025-era `tools/call` of a quick tool, made neither as a task nor
 * with a progress token (both need the stream).
 */
export function answersAsJson(request: Request, message: unknown): boolean {
	const call = message as {
		jsonrpc?: unknown;
		id?: unknown;
		method?: unknown;
		params?: {
			name?: unknown;
			task?: unknown;
			_meta?: Record<string, unknown>;
		};
	};
	if (
		call?.method !== "tools/call" ||
		call.jsonrpc !== "2.0" ||
		(typeof call.id !== "string" && typeof call.id !== "number")
	)
		return false;
	const params = call.params;
	if (
		typeof params?.name !== "string" ||
		!QUICK_TOOLS.has(params.name) ||
		params.task !== undefined ||
		params._meta?.progressToken !== undefined
	)
		return false;
	// 2025-era: no 2026 envelope in `_meta` and no 2026 version header (the SDK's own test, less
	// its schema checks, which the transport makes anyway: they were 50 µs a call here).
	const version = request.headers.get("mcp-protocol-version");
	return (
		!(params._meta && PROTOCOL_VERSION_META_KEY in params._meta) &&
		(version === null || !MODERN_PROTOCOL_VERSIONS.includes(version.trim()))
	);
}

/**
 * Serves one 2025-era request on a fresh server and transport, as the SDK's stateless legacy
 * serving does, with the transport answering in JSON.
 */
export function createJsonCalls(
	factory: (ctx: {
		era: "legacy";
		authInfo?: AuthInfo;
		requestInfo: Request;
	}) => McpServer | Promise<McpServer>,
	onerror: (error: Error) => void,
): (
	request: Request,
	message: unknown,
	authInfo: AuthInfo | undefined,
) => Promise<Response> {
	return async (request, message, authInfo) => {
		let close: (() => void) | undefined;
		try {
			const server = await factory({
				era: "legacy",
				...(authInfo !== undefined && { authInfo }),
				requestInfo: request,
			});
			const transport = new WebStandardStreamableHTTPServerTransport({
				sessionIdGenerator: undefined,
				enableJsonResponse: true,
			});
			close = () => {
				transport.close().catch(() => {});
				server.close().catch(() => {});
			};
			await server.connect(transport);
			return await transport.handleRequest(request, {
				...(authInfo !== undefined && { authInfo }),
				parsedBody: message,
			});
		} catch (error) {
			onerror(error instanceof Error ? error : new Error(String(error)));
			const id = (message as { id?: unknown }).id;
			return Response.json(
				{
					jsonrpc: "2.0",
					id: typeof id === "string" || typeof id === "number" ? id : null,
					error: { code: -32603, message: "Internal server error" },
				},
				{ status: 500 },
			);
		} finally {
			close?.();
		}
	};
}
