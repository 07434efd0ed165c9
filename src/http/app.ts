/**
 * The HTTP surface: `/mcp` (MCP Streamable HTTP, both protocol eras, stateless), `/healthz`
 * and `/metrics`. Web-standard in and out, so tests can call `app.request()` without a port;
 * only `index.ts` binds it to `Bun.serve`.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import type { ClientConfig } from "../config/types.ts";
import { badInitialize } from "../mcp/initialize-check.ts";
import { startReadAhead } from "../mcp/read-ahead.ts";
import { buildServer } from "../mcp/server.ts";
import { noteLegacyTaskRequest } from "../mcp/tasks.ts";
import { servicesForClient } from "../rights/for-client.ts";
import type { Services } from "../services.ts";
import { createYoungCollector } from "../util/young-collector.ts";
import { type CallerEnv, callerGuard, callerMatcher } from "./callers.ts";
import { conversationOriginGuard } from "./conversation-origin.ts";
import { hostGuard, originGuard } from "./guards.ts";
import { healthReport, metricsText, publicHealth } from "./health.ts";
import { holdUntilSettled } from "./hold-headers.ts";
import { createJsonCalls, quickCallEra } from "./json-calls.ts";
import { BODY_TIMEOUT_MS, MAX_BODY_BYTES, readMcpBody } from "./mcp-body.ts";
import { protocolVersionGuard } from "./protocol-version.ts";
import { isTaskListen, serveTaskListen } from "./task-listen.ts";

/** SSE comments this often keep proxies and Bun's idle timer from cutting quiet tool calls. */
const KEEP_ALIVE_MS = 5_000;

export interface AppOptions {
	/** How long a POST /mcp body may take to arrive (default 30 s), then 408. */
	bodyTimeoutMs?: number;
}

export function createApp(
	services: Services,
	options: AppOptions = {},
): Hono<CallerEnv> {
	const { server } = services.config;
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
	/** The caller handed to the MCP server factory (the SDK passes `authInfo` through). */
	const as = (client: ClientConfig, message?: unknown) => ({
		authInfo: {
			token: "",
			clientId: client.name,
			scopes: [client.access],
			extra: { client, ...requestNames(message) },
		},
	});

	const app = new Hono<CallerEnv>();
	app.onError((error, c) => {
		services.log.error("http handler failed", { path: c.req.path, error });
		return c.json({ error: "internal error" }, 500);
	});
	// DNS-rebinding and browser checks apply to every route; the bearer only to /mcp and
	// /metrics, so `healthcheck` and container probes need no secret. Without the bearer,
	// /healthz says only that the process serves: machine names, reasons and delivery
	// errors are for the operator.
	app.use(
		"*",
		hostGuard({ listenHost: server.host, allowedHosts: server.allowedHosts }),
	);
	app.use(
		"*",
		originGuard({
			listenHost: server.host,
			allowedOrigins: server.allowedOrigins,
		}),
	);
	// A client sees the operator's view of /healthz (machine names, delivery errors) and may
	// replay the dead letters only with full access.
	const callerOf = callerMatcher(services.config);
	const operator = (client: ClientConfig) => client.access === "full-access";
	app.get("/healthz", async (c) => {
		const client = await callerOf(c.req.header("authorization"));
		return c.json(
			client && operator(client)
				? healthReport(services)
				: publicHealth(services),
		);
	});
	app.use("/mcp", callerGuard(callerOf));
	app.use("/mcp", conversationOriginGuard());
	app.use("/mcp", protocolVersionGuard());
	app.use("/metrics", callerGuard(callerOf));
	app.post("/outbox/replay", callerGuard(callerOf, operator), (c) =>
		c.json({ replayed: services.events.replayDead() }),
	);
	app.get("/metrics", (c) =>
		c.text(metricsText(services), 200, {
			"content-type": "text/plain; version=0.0.4",
		}),
	);
	const young = createYoungCollector();
	app.post("/mcp", async (c) => {
		const body = await readMcpBody(
			c.req.raw,
			MAX_BODY_BYTES,
			options.bodyTimeoutMs,
		);
		if (body.kind === "timeout")
			// Closed after it: the rest of a stalled body is not worth waiting for.
			return c.json(
				{
					jsonrpc: "2.0",
					id: null,
					error: {
						code: -32000,
						message: `Request body not received within ${(options.bodyTimeoutMs ?? BODY_TIMEOUT_MS) / 1000} s of the request's start`,
					},
				},
				408,
				{ connection: "close" },
			);
		if (body.kind === "too-large")
			return c.json(
				{
					jsonrpc: "2.0",
					id: null,
					error: {
						code: -32000,
						message: `Request body too large (over ${MAX_BODY_BYTES} bytes)`,
					},
				},
				413,
			);
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
	});
	app.all("/mcp", (c) => handler.fetch(c.req.raw, as(c.get("client"))));
	return app;
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
