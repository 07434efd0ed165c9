/**
 * Calls of the quick tools go out as one JSON body, not an SSE stream. The SDK's stateless
 * legacy serving always streams: the result is framed as an SSE event, copied through a second
 * stream, and the client runs it through its event parser. For `t3_machines` at 500 machines (a
 * 224 KB answer) that framing was a fifth of the call. Streamable HTTP lets a server answer a
 * POST with `application/json` (the client accepts both), and these tools send no notifications
 * and answer within seconds (from memory, or one T3 read bounded at 15 s after at most 5 s for a
 * connecting machine), so the SSE keep-alive comments that hold long calls (a `t3_wait`, a
 * dispatch) open are not needed. Both eras: the 2025 one on a transport of our own (the SDK's
 * legacy serving takes no JSON mode), the 2026 one on a second SDK handler in its JSON mode.
 */
import {
	createMcpHandler,
	type McpServer,
	PROTOCOL_VERSION_META_KEY,
	WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { MODERN_PROTOCOL_VERSIONS } from "./protocol-version.ts";

/** Tools that answer from what the connector holds or from one bounded T3 read. */
const QUICK_TOOLS: ReadonlySet<string> = new Set([
	"t3_machines",
	"t3_usage",
	"t3_projects",
	"t3_thread",
	"t3_threads",
]);

type AuthInfo = NonNullable<
	Parameters<WebStandardStreamableHTTPServerTransport["handleRequest"]>[1]
>["authInfo"];

type Era = "legacy" | "modern";

/**
 * The era of a `tools/call` of a quick tool made neither as a task nor with a progress token
 * (both need the stream); undefined for any other request. Told as the SDK tells it, less its
 * schema checks (50 µs a call; the transport checks the message anyway): a 2026 request carries
 * the version in `_meta`, and a 2026 version header without it is the SDK's to refuse.
 */
export function quickCallEra(
	request: Request,
	message: unknown,
): Era | undefined {
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
		return undefined;
	const params = call.params;
	if (
		typeof params?.name !== "string" ||
		!QUICK_TOOLS.has(params.name) ||
		params.task !== undefined ||
		params._meta?.progressToken !== undefined
	)
		return undefined;
	const meta: unknown = params._meta;
	// A `_meta` that is no object is the transport's to refuse (a JSON-RPC error), not a crash.
	if (
		typeof meta === "object" &&
		meta !== null &&
		PROTOCOL_VERSION_META_KEY in meta
	)
		return "modern";
	const version = request.headers.get("mcp-protocol-version");
	return version !== null && MODERN_PROTOCOL_VERSIONS.includes(version.trim())
		? undefined
		: "legacy";
}

type Factory = (ctx: {
	era: Era;
	authInfo?: AuthInfo;
	requestInfo?: Request;
}) => McpServer | Promise<McpServer>;

/** Serves a quick call of either era (as `quickCallEra` told it) with a JSON answer. */
export function createJsonCalls(
	factory: Factory,
	onerror: (error: Error) => void,
	maxRequestBodySize: number,
): (
	request: Request,
	message: unknown,
	authInfo: AuthInfo | undefined,
	era: Era,
) => Promise<Response> {
	const modern = withoutJsonWarning(() =>
		createMcpHandler(factory, {
			legacy: "reject",
			responseMode: "json",
			maxRequestBodySize,
			onerror,
		}),
	);
	return (request, message, authInfo, era) =>
		era === "modern"
			? modern.fetch(request, {
					parsedBody: message,
					...(authInfo !== undefined && { authInfo }),
				})
			: serveLegacy(factory, onerror, request, message, authInfo);
}

/**
 * One 2025-era request on a fresh server and transport, as the SDK's stateless legacy serving
 * does, with the transport answering in JSON.
 */
async function serveLegacy(
	factory: Factory,
	onerror: (error: Error) => void,
	request: Request,
	message: unknown,
	authInfo: AuthInfo | undefined,
): Promise<Response> {
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
		const answer = transport.handleRequest(request, {
			...(authInfo !== undefined && { authInfo }),
			parsedBody: message,
		});
		// A client that gives up cancels the call (its tool's signal), as the SDK's own serving
		// does: a `t3_thread` read is not left running to its bound for nobody. A closed
		// transport never answers, so the request ends here instead of waiting on it.
		return await Promise.race([answer, gaveUp(request.signal, close)]);
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
}

/** Settles when the client has gone (after `close`): the answer nobody reads. */
function gaveUp(
	signal: AbortSignal | undefined,
	close: () => void,
): Promise<Response> {
	return new Promise((resolve) => {
		const end = () => {
			close();
			resolve(new Response(null, { status: 499 }));
		};
		if (signal?.aborted) end();
		else signal?.addEventListener("abort", end, { once: true });
	});
}

/**
 * The SDK warns on stderr, once, that its JSON mode drops notifications sent before a result;
 * only quick tools, which send none, are served so. Our stderr holds JSON log lines only.
 */
function withoutJsonWarning<T>(make: () => T): T {
	const warn = console.warn;
	console.warn = (...args: unknown[]) => {
		if (!String(args[0]).startsWith("responseMode: 'json'")) warn(...args);
	};
	try {
		return make();
	} finally {
		console.warn = warn;
	}
}
