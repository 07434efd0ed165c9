/** `serve` and `demo`: run the server until SIGINT/SIGTERM, then stop cleanly (exit 0). */

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
import { reloadOnHangup } from "./reload-on-hangup.ts";
import { type RunningServer, startServer } from "./serve.ts";
import { whoMayCall } from "./who-may-call.ts";

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
	const reloader = reloadOnHangup(server.services, log, { env });
	// One server per process here (tests start several in one, without it).
	const pacer = startHeapPacer();
	return runUntilSignal(signalled, server, log, async () => {
		reloader.stop();
		pacer.stop();
	});
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
		// Approval links (docs/people.md): where people open them, and the people hook's origin.
		...(config.approvals
			? {
					public_url: config.server.publicUrl ?? null,
					people_hook: urlOrigin(config.approvals.hookUrl),
					link_client: config.approvals.linkClient,
				}
			: {}),
	});
}
