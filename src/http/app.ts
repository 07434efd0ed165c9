/**
 * The HTTP surface: `/mcp` (MCP Streamable HTTP, both protocol eras, stateless), `/healthz`
 * and `/metrics`. Web-standard in and out, so tests can call `app.request()` without a port;
 * only `index.ts` binds it to `Bun.serve`.
 */
import { Hono } from "hono";
import { mountApprovalRoutes } from "../approvals/routes.ts";
import type { ClientConfig } from "../config/types.ts";
import { mountConsole } from "../console/routes.tsx";
import { callerMatcher } from "../rights/callers.ts";
import type { Services } from "../services.ts";
import { maskLinkPaths } from "../util/redact.ts";
import { type CallerEnv, callerGuard } from "./callers.ts";
import { conversationOriginGuard } from "./conversation-origin.ts";
import { hostGuard, originGuard } from "./guards.ts";
import { healthReport, metricsText, publicHealth } from "./health.ts";
import { isLoopback } from "./host.ts";
import { BODY_TIMEOUT_MS, MAX_BODY_BYTES, readMcpBody } from "./mcp-body.ts";
import type { McpRoute } from "./mcp-route.ts";

export interface AppOptions {
	/** How long a POST /mcp body may take to arrive (default 30 s), then 408. */
	bodyTimeoutMs?: number;
}

export function createApp(
	services: Services,
	options: AppOptions = {},
): Hono<CallerEnv> {
	const { server } = services.config;
	// The MCP side is loaded by the first /mcp request, not at start (http/mcp-route.ts).
	let route: Promise<McpRoute> | undefined;
	const mcp = () =>
		(route ??= import("./mcp-route.ts").then((m) =>
			m.createMcpRoute(services),
		));

	const app = new Hono<CallerEnv>();
	app.onError((error, c) => {
		// The path may be an approval link: its token is masked (every log line's is, too).
		services.log.error("http handler failed", {
			path: maskLinkPaths(c.req.path),
			error,
		});
		return c.json({ error: "internal error" }, 500);
	});
	// DNS-rebinding and browser checks apply to every route; the bearer only to /mcp and
	// /metrics, so `healthcheck` and container probes need no secret. Without the bearer,
	// /healthz says only that the process serves: machine names, reasons and delivery
	// errors are for the operator.
	// `public_url` is read at each request: a reload may change it.
	const publicUrl = () => services.config.server.publicUrl;
	app.use(
		"*",
		hostGuard({
			listenHost: server.host,
			allowedHosts: server.allowedHosts,
			publicUrl,
		}),
	);
	// Approval links for people (src/approvals): the page and its one POST, which checks
	// `Origin` itself (public_url's or the request's own, CONTRACT.md "Approval links"), so
	// before the guard below: a person reaching the server by another name of its own still
	// decides, and an origin allowed for MCP clients still cannot.
	mountApprovalRoutes(app, services);
	app.use(
		"*",
		originGuard({
			listenHost: server.host,
			allowedOrigins: server.allowedOrigins,
			publicUrl,
		}),
	);
	// The console for people (src/console): `/` redirects there.
	mountConsole(app, services, { loopbackListener: isLoopback(server.host) });
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
	app.use("/mcp", async (c, next) => (await mcp()).versionGuard(c, next));
	app.use("/metrics", callerGuard(callerOf));
	app.post("/outbox/replay", callerGuard(callerOf, operator), (c) =>
		c.json({ replayed: services.events.replayDead() }),
	);
	// Every client's call counts and every machine: for full-access clients only (CONTRACT.md
	// "Trust round three"); another known client is told why (403), not taken for a stranger.
	app.get("/metrics", (c) => {
		const client = c.get("client");
		if (!operator(client))
			return c.text(
				`/metrics needs a full-access client; client "${client.name}" has access ${client.access}.\n`,
				403,
			);
		return c.text(metricsText(services), 200, {
			"content-type": "text/plain; version=0.0.4",
		});
	});
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
		return (await mcp()).post(c, body);
	});
	app.all("/mcp", async (c) => (await mcp()).other(c));
	return app;
}
