/**
 * What `/mcp` does once a request is let in and its body read: the SDK's handlers for both
 * protocol eras, the quick calls' JSON answers, task listens and the read-ahead of a thread.
 * Loaded by the first `/mcp` request (http/app.ts): these modules (the SDK, every tool and its
 * zod schemas) were a third of the time from spawn to a first `/healthz` answer.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import type { Context, MiddlewareHandler } from "hono";
import type { ClientConfig } from "../config/types.ts";
import { badInitialize } from "../mcp/initialize-check.ts";
import { startReadAhead } from "../mcp/read-ahead.ts";
import { buildServer } from "../mcp/server.ts";
import { noteLegacyTaskRequest } from "../mcp/tasks.ts";
import { servicesForClient } from "../rights/for-client.ts";
import type { Services } from "../services.ts";
import { createYoungCollector } from "../util/young-collector.ts";
import type { CallerEnv } from "./callers.ts";
import { holdUntilSettled } from "./hold-headers.ts";
import { createJsonCalls, quickCallEra } from "./json-calls.ts";
import { MAX_BODY_BYTES, type McpBody } from "./mcp-body.ts";
import { protocolVersionGuard } from "./protocol-version.ts";
import { isTaskListen, serveTaskListen } from "./task-listen.ts";

/** SSE comments this often keep proxies and Bun's idle timer from cutting quiet tool calls. */
const KEEP_ALIVE_MS = 5_000;

export interface McpRoute {
	/** Refuses a protocol version this server does not serve. */
	versionGuard: MiddlewareHandler<CallerEnv>;
	/** A POST whose body arrived whole and in time. */
	post(
		c: Context<CallerEnv>,
		body: Extract<McpBody, { kind: "json" | "raw" }>,
	): Promise<Response>;
	/** Every other method (the SDK answers them). */
	other(c: Context<CallerEnv>): Promise<Response>;
}

export function createMcpRoute(services: Services): McpRoute {
	const factory = (ctx: {
		era: "modern" | "legacy";
		authInfo?: { extra?: Record<string, unknown> };
	}) => {
		const extra = ctx.authInfo?.extra as
			| { client: ClientConfig; method?: string; tool?: string }
			| undefined;
		return buildServer(
			services,
			ctx.era,
			extra?.client,
			extra?.method,
			extra?.tool,
		);
	};
	const onTransportError = (error: Error) =>
		services.log.warn("mcp transport error", { error: error.message });
	const handler = createMcpHandler(factory, {
		legacy: "stateless",
		responseMode: "sse",
		keepAliveMs: KEEP_ALIVE_MS,
		maxRequestBodySize: MAX_BODY_BYTES,
		onerror: onTransportError,
	} as Parameters<typeof createMcpHandler>[1]);
	const jsonCalls = createJsonCalls(factory, onTransportError, MAX_BODY_BYTES);
	const young = createYoungCollector();
	return {
		versionGuard: protocolVersionGuard(),
		async post(c, body) {
			const client = c.get("client");
			if (body.kind === "raw") return handler.fetch(body.request, as(client));
			const refused = badInitialize(body.message);
			if (refused) return c.json(refused);
			if (isTaskListen(body.message))
				return serveTaskListen(
					body.message,
					servicesForClient(services, client),
					c.req.raw.signal,
					KEEP_ALIVE_MS,
				);
			const ahead = startReadAhead(
				c.req.raw,
				body.message,
				servicesForClient(services, client),
			);
			noteLegacyTaskRequest(c.req.raw, body.message);
			const caller = as(client, body.message);
			const quick = quickCallEra(c.req.raw, body.message);
			if (quick) {
				// Answered whole: nothing to hold.
				const response = await jsonCalls(
					c.req.raw,
					body.message,
					caller.authInfo,
					quick,
				);
				young.noteRequest();
				return response;
			}
			const response = await handler.fetch(c.req.raw, {
				parsedBody: body.message,
				...caller,
			});
			young.noteRequest();
			return ahead ? holdUntilSettled(response, ahead.detail) : response;
		},
		other: (c) => handler.fetch(c.req.raw, as(c.get("client"))),
	};
}

/** The caller handed to the MCP server factory (the SDK passes `authInfo` through). */
function as(client: ClientConfig, message?: unknown) {
	return {
		authInfo: {
			token: "",
			clientId: client.name,
			scopes: [client.access],
			extra: { client, ...requestNames(message) },
		},
	};
}

/** A JSON-RPC request's method and, for `tools/call`, its tool's name. */
function requestNames(message: unknown): { method?: string; tool?: string } {
	const request = message as
		| { method?: unknown; params?: { name?: unknown } }
		| undefined;
	const method =
		typeof request?.method === "string" ? request.method : undefined;
	const tool = request?.params?.name;
	return {
		method,
		tool:
			method === "tools/call" && typeof tool === "string" ? tool : undefined,
	};
}
