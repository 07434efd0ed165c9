/**
 * Starts the MCP server on `Bun.serve` for a loaded config, and stops it in an order that
 * lets in-flight waits answer: waits end first, then the listener, then machines and sqlite.
 */

import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { StartupError } from "../config/startup-error.ts";
import type { AppConfig } from "../config/types.ts";
import { createApp } from "../http/app.ts";
import {
	createServices,
	type ServiceOptions,
	type Services,
} from "../services.ts";
import { shapeTaskResult } from "../tools/task-results.ts";
import { VERSION } from "../version.ts";

export interface RunningServer {
	url: string;
	mcpUrl: string;
	port: number;
	services: Services;
	stop(): Promise<void>;
}

export async function startServer(
	config: AppConfig,
	options: Omit<ServiceOptions, "version" | "taskShaper"> & {
		version?: string;
		taskShaper?: ServiceOptions["taskShaper"];
		/** Tests: a shorter deadline for request bodies (http/mcp-body.ts). */
		bodyTimeoutMs?: number;
	},
): Promise<RunningServer> {
	const { bodyTimeoutMs, ...serviceOptions } = options;
	// The port first: a bad address or a port in use is then the only line on stderr, before
	// anything (the state file, the machines) is opened that could log.
	let handle: (
		request: Request,
		server: Bun.Server<undefined>,
	) => Response | Promise<Response>;
	let server: ReturnType<typeof Bun.serve>;
	try {
		server = Bun.serve({
			hostname: config.server.host,
			port: config.server.port,
			// Long tool calls may be quiet between SSE keep-alives; never let Bun cut them (notes/bun.md §2).
			idleTimeout: 255,
			// Set below in this same turn, so no request is served before it is.
			fetch: (request, s) => handle(request, s),
		});
	} catch (error) {
		throw await listenError(error, config);
	}
	let services: Services;
	try {
		services = createServices(config, {
			version: VERSION,
			taskShaper: shapeTaskResult,
			...serviceOptions,
		});
	} catch (error) {
		await server.stop(true); // frees the port for whoever starts next
		throw error;
	}
	const app = createApp(services, { bodyTimeoutMs });
	handle = app.fetch;
	services.start();
	const host = config.server.host.includes(":")
		? `[${config.server.host}]`
		: config.server.host;
	const shownHost = host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host;
	const url = `http://${shownHost}:${server.port}`;
	let stopping: Promise<void> | undefined;
	return {
		url,
		mcpUrl: `${url}/mcp`,
		port: server.port as number,
		services,
		stop() {
			stopping ??= (async () => {
				services.beginShutdown();
				// Let waits that just returned flush their responses before the listener closes.
				await new Promise((resolve) => setTimeout(resolve, 50));
				// Graceful first; a request that still hangs after 3 s is cut.
				await Promise.race([
					server.stop(false),
					new Promise((r) => setTimeout(r, 3_000)),
				]);
				await server.stop(true);
				await services.stop();
			})();
			return stopping;
		},
	};
}

/**
 * Why `Bun.serve` could not listen, as a StartupError (one line and exit 3, never a stack
 * trace): a port in use, an address this machine does not have, a name that does not resolve.
 */
async function listenError(
	error: unknown,
	config: AppConfig,
): Promise<StartupError> {
	const code = (error as { code?: unknown })?.code;
	const { host, port } = config.server;
	const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
	const portSetting = `T3CODE_MCP_PORT (or [server] port in ${config.file})`;
	const hostFix = `set T3CODE_MCP_HOST (or [server] host in ${config.file}) to an address of this machine, such as 127.0.0.1 or 0.0.0.0`;
	// The address first: Bun may call a bad one's failure "port in use" (beside another listener).
	if (isIP(host) === 0 && /^[\d.]+$/.test(host))
		return new StartupError(where, "not a valid IP address", hostFix);
	if (isIP(host) === 0 && !(await resolves(host)))
		return new StartupError(
			where,
			`the name "${host}" does not resolve to an address`,
			hostFix,
		);
	if (code === "EADDRINUSE")
		return new StartupError(
			where,
			"the port is in use by another process",
			`stop the other process, or set ${portSetting} to a free port`,
		);
	if (code === "EACCES")
		return new StartupError(
			where,
			"this user may not listen on that port",
			`use a port above 1023 (${portSetting})`,
		);
	if (code === "EADDRNOTAVAIL")
		return new StartupError(where, "this machine has no such address", hostFix);
	const detail = error instanceof Error ? error.message : String(error);
	return new StartupError(where, `cannot listen there (${detail})`, hostFix);
}

async function resolves(host: string): Promise<boolean> {
	try {
		await lookup(host);
		return true;
	} catch {
		return false;
	}
}
