/**
 * The HTTP surface: `/mcp` (MCP Streamable HTTP, both protocol eras, stateless), `/healthz`
 * and `/metrics`. Web-standard in and out, so tests can call `app.request()` without a port;
 * only `index.ts` binds it to `Bun.serve`.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { buildServer } from "../mcp/server.ts";
import type { Services } from "../services.ts";
import { bearerGuard, hostGuard, originGuard } from "./guards.ts";
import { healthReport, metricsText } from "./health.ts";

/** SSE comments this often keep proxies and Bun's idle timer from cutting quiet tool calls. */
const KEEP_ALIVE_MS = 5_000;

export function createApp(services: Services): Hono {
	const { server } = services.config;
	const handler = createMcpHandler(() => buildServer(services), {
		legacy: "stateless",
		responseMode: "sse",
		keepAliveMs: KEEP_ALIVE_MS,
		onerror: (error: Error) =>
			services.log.warn("mcp transport error", { error: error.message }),
	} as Parameters<typeof createMcpHandler>[1]);

	const app = new Hono();
	app.onError((error, c) => {
		services.log.error("http handler failed", { path: c.req.path, error });
		return c.json({ error: "internal error" }, 500);
	});
	// DNS-rebinding and browser checks apply to every route; the bearer only to /mcp and
	// /metrics, so `healthcheck` and container probes need no secret.
	app.use(
		"*",
		hostGuard({ listenHost: server.host, allowedHosts: server.allowedHosts }),
	);
	app.use("*", originGuard(server.allowedOrigins));
	app.get("/healthz", (c) => c.json(healthReport(services)));
	app.use("/mcp", bearerGuard(server.token));
	app.use("/metrics", bearerGuard(server.token));
	app.post("/outbox/replay", bearerGuard(server.token), (c) =>
		c.json({ replayed: services.events.replayDead() }),
	);
	app.get("/metrics", (c) =>
		c.text(metricsText(services), 200, {
			"content-type": "text/plain; version=0.0.4",
		}),
	);
	app.all("/mcp", (c) => handler.fetch(c.req.raw));
	return app;
}
