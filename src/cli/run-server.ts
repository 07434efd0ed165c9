/** `serve` and `demo`: run the server until SIGINT/SIGTERM, then stop cleanly (exit 0). */

import { DEFAULT_CLIENT } from "../config/clients.ts";
import type { Env } from "../config/env.ts";
import {
	ConfigError,
	configWarnings,
	type LoadConfigOptions,
	loadConfig,
	openMcpWarning,
} from "../config/index.ts";
import { StartupError } from "../config/startup-error.ts";
import type { AppConfig } from "../config/types.ts";
import { startHeapPacer } from "../util/heap-pacer.ts";
import { createLogger, type Logger } from "../util/log.ts";
import { urlOrigin } from "../util/redact.ts";
import { EXIT } from "./help.ts";
import { type RunningServer, startServer } from "./serve.ts";

/** One line per problem, each saying what to fix; stderr holds nothing else before it. */
export function configErrorText(error: ConfigError): string {
	return error.message
		.split("\n")
		.map((line) => `t3code-mcp: configuration error: ${line}\n`)
		.join("");
}

export async function load(
	env: Env,
	options: Omit<LoadConfigOptions, "env"> = {},
): Promise<AppConfig | number> {
	try {
		return await loadConfig({ ...options, env });
	} catch (error) {
		if (error instanceof ConfigError) {
			process.stderr.write(configErrorText(error));
			return EXIT.config;
		}
		throw error;
	}
}

/**
 * Runs a start-up step; a StartupError (state file, port) becomes one line on stderr and
 * exit 3, like a configuration error.
 */
export async function startOrExplain<T>(
	start: () => Promise<T>,
): Promise<T | number> {
	try {
		return await start();
	} catch (error) {
		if (!(error instanceof StartupError)) throw error;
		process.stderr.write(`t3code-mcp: ${error.message}\n`);
		return EXIT.config;
	}
}

export function untilSignal(): Promise<string> {
	return new Promise((resolve) => {
		process.once("SIGINT", () => resolve("SIGINT"));
		process.once("SIGTERM", () => resolve("SIGTERM"));
	});
}

export async function runUntilSignal(
	signalled: Promise<string>,
	server: RunningServer,
	log: Logger,
	extra?: () => Promise<void>,
) {
	const signal = await signalled;
	log.info("stopping", { signal });
	await server.stop();
	await extra?.();
	log.info("stopped");
	return EXIT.ok;
}

export async function runServe(env: Env = process.env): Promise<number> {
	// Listen for signals first: a supervisor may stop us while we are still starting.
	const signalled = untilSignal();
	const config = await load(env);
	if (typeof config === "number") return config;
	const log = createLogger(config.server.logLevel);
	const server = await startOrExplain(() => startServer(config, { log }));
	if (typeof server === "number") return server;
	logListening(config, server, log);
	// One server per process here (tests start several in one, without it).
	const pacer = startHeapPacer();
	return runUntilSignal(signalled, server, log, async () => pacer.stop());
}

/**
 * Exactly who may call `/mcp` (CONTRACT.md "Trust round three"): with `[clients.*]`, the
 * clients that have a token, by name (`default` is `T3CODE_MCP_TOKEN`); else the holder of
 * `T3CODE_MCP_TOKEN`; "open" only when there is neither.
 */
export function whoMayCall(
	config: Pick<AppConfig, "clients"> & {
		server: Pick<AppConfig["server"], "token">;
	},
): { mcp: string; clients: string[] } {
	if (config.clients.length > 0) {
		const named = (n: string) =>
			n === DEFAULT_CLIENT ? `${n} (T3CODE_MCP_TOKEN)` : n;
		const callers = config.clients
			.filter((c) => c.token !== undefined)
			.map((c) => c.name);
		const tokenless = config.clients
			.filter((c) => c.token === undefined)
			.map((c) => c.name);
		const waiting =
			tokenless.length > 0
				? `; without a token, so not yet: ${tokenless.join(", ")}`
				: "";
		return {
			mcp:
				callers.length > 0
					? `clients only, each with its own bearer: ${callers.map(named).join(", ")}${waiting}`
					: `no one: no client has a token yet (${tokenless.join(", ")})`,
			clients: callers,
		};
	}
	if (config.server.token !== undefined)
		return {
			mcp: "T3CODE_MCP_TOKEN needed (client default)",
			clients: [DEFAULT_CLIENT],
		};
	return {
		mcp: "open to anyone who can reach it (no [clients.*], T3CODE_MCP_TOKEN unset)",
		clients: [],
	};
}

/**
 * The start log, once the port is bound (a start-up error before it is then the only line on
 * stderr): the warnings, then where `/mcp` is and exactly who may call it.
 */
export function logListening(
	config: AppConfig,
	server: RunningServer,
	log: Logger,
): void {
	for (const warning of configWarnings(config)) log.warn(warning);
	const open = openMcpWarning(config);
	if (open) log.warn(open.detail, { fix: open.fix });
	log.info("listening", {
		url: server.mcpUrl,
		...whoMayCall(config),
		machines: config.machines.map((m) => m.name),
		config: config.file,
		// Its origin only: the path of a webhook URL often holds a secret.
		hook: config.server.hookUrl ? urlOrigin(config.server.hookUrl) : null,
	});
}
