/**
 * `t3code-mcp stdio`: the same tools over MCP stdio, for a client that launches local servers
 * (Claude Desktop, Cursor, Codex, Claude Code). stdout carries only JSON-RPC (our line transport,
 * mcp/stdio-transport.ts, answers every line; logs go to stderr); no HTTP port. A launched process's working directory
 * is unknown, so config and state default to XDG paths. The state file and the webhook outbox
 * work as under `serve`; when another process holds the state file, this one runs on in-memory
 * state without webhooks and says so on stderr and in `t3_machines`.
 */

import { homedir } from "node:os";
import { join } from "node:path";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { OPEN_CALLER } from "../config/clients.ts";
import { type Env, envValue } from "../config/env.ts";
import { configWarnings } from "../config/index.ts";
import { StartupError } from "../config/startup-error.ts";
import type { AppConfig, ClientConfig } from "../config/types.ts";
import { buildServer } from "../mcp/server.ts";
import { createLineTransport } from "../mcp/stdio-transport.ts";
import { createServices, type Services } from "../services.ts";
import { StateInUseError } from "../store/state-file.ts";
import { shapeTaskResult } from "../tools/task-results.ts";
import { createLogger, type Logger } from "../util/log.ts";
import { VERSION } from "../version.ts";
import { EXIT } from "./help.ts";
import { load, untilSignal } from "./run-server.ts";

/** `$XDG_CONFIG_HOME/t3code-mcp/t3code.toml` and `$XDG_STATE_HOME/t3code-mcp/t3code-mcp.sqlite`. */
export function xdgDefaults(env: Env): {
	configFile: string;
	statePath: string;
} {
	const home = envValue(env, "HOME") ?? homedir();
	// The spec says relative XDG values are invalid and to be ignored.
	const base = (name: string, fallback: string) => {
		const value = envValue(env, name);
		return value?.startsWith("/") ? value : join(home, fallback);
	};
	return {
		configFile: join(
			base("XDG_CONFIG_HOME", ".config"),
			"t3code-mcp",
			"t3code.toml",
		),
		statePath: join(
			base("XDG_STATE_HOME", ".local/state"),
			"t3code-mcp",
			"t3code-mcp.sqlite",
		),
	};
}

export async function runStdio(env: Env = process.env): Promise<number> {
	// stdout is the protocol channel: anything printed with console goes to stderr instead.
	for (const name of ["log", "info", "debug"] as const)
		console[name] = console.error;
	const signalled = untilSignal();
	const defaults = xdgDefaults(env);
	const config = await load(env, {
		defaultConfigFile: defaults.configFile,
		defaultStatePath: defaults.statePath,
	});
	if (typeof config === "number") return config;
	const log = createLogger(config.server.logLevel);
	const client = stdioClient(config);
	if (typeof client === "string") {
		process.stderr.write(`t3code-mcp: ${client}\n`);
		return EXIT.config;
	}

	let services: Services;
	try {
		services = openServices(config, log);
	} catch (error) {
		if (!(error instanceof StartupError)) throw error;
		process.stderr.write(`t3code-mcp: ${error.message}\n`);
		return EXIT.config;
	}
	services.start();
	// After the state file opened: a start-up error before this is the only line on stderr.
	for (const warning of configWarnings(config)) log.warn(warning);

	let ended: (reason: string) => void = () => {};
	const stdinClosed = new Promise<string>((resolve) => {
		ended = resolve;
	});
	const transport = createLineTransport(
		{ stdin: process.stdin, stdout: process.stdout },
		{
			// Waits in flight answer now with their current state (as under SIGTERM), so a
			// client that closed its end gets every answer without holding the process open.
			onInputEnd: () => services.beginShutdown(),
			onClosed: (reason) =>
				ended(
					reason === "drained"
						? "stdin closed; every request read was answered"
						: reason,
				),
		},
	);
	// One server for the session: every tool registered, the listing filtered to the client's
	// level, and a call above it the same audited `capability_denied` tool error as over HTTP.
	const handle = serveStdio(
		(ctx) =>
			buildServer(services, ctx.era, client, undefined, undefined, "stdio"),
		{
			transport,
			onerror: (error) =>
				log.warn("mcp stdio transport error", { error: error.message }),
		},
	);
	log.info("serving MCP on stdio", {
		machines: config.machines.map((m) => m.name),
		config: config.file,
		state: config.server.statePath,
	});
	const reason = await Promise.race([signalled, stdinClosed]);
	log.info("stopping", { reason });
	services.beginShutdown();
	await handle.close();
	await services.stop();
	log.info("stopped");
	return EXIT.ok;
}

/**
 * Who the local user runs as (CONTRACT.md "Clients and rights"): the client `T3CODE_MCP_CLIENT`
 * names (no token: the user launched the process), else every right as before clients existed.
 * A name no `[clients.*]` has is a configuration error naming the clients there are.
 */
function stdioClient(config: AppConfig): ClientConfig | string {
	const name = process.env.T3CODE_MCP_CLIENT?.trim();
	if (!name) return OPEN_CALLER;
	const found = config.clients.find((c) => c.name === name);
	if (found) return found;
	const known = config.clients.map((c) => c.name);
	return `T3CODE_MCP_CLIENT: no client "${name}" in ${config.file}; expected ${known.length ? `one of ${known.join(", ")}` : "a [clients.<name>] table there, or leave T3CODE_MCP_CLIENT unset"}`;
}

/**
 * Services on the configured state file; when another process holds it, on in-memory state
 * with webhook delivery off (two outboxes would post the same events twice).
 */
function openServices(config: AppConfig, log: Logger): Services {
	try {
		return createServices(config, {
			version: VERSION,
			log,
			taskShaper: shapeTaskResult,
		});
	} catch (error) {
		if (!(error instanceof StateInUseError)) throw error;
		const note = `The state file ${error.file} is in use by another t3code-mcp process (${error.holder}), so this session keeps its state in memory: watched threads and undelivered events are forgotten when it exits, and no webhooks are sent from it. The tools work as usual.`;
		process.stderr.write(`t3code-mcp: ${note}\n`);
		log.warn("running on in-memory state", {
			state: error.file,
			holder: error.holder,
		});
		const server = {
			...config.server,
			statePath: ":memory:",
			hookUrl: undefined,
		};
		return createServices(
			{ ...config, server },
			{ version: VERSION, log, stateNote: note, taskShaper: shapeTaskResult },
		);
	}
}
