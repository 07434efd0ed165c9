/** `serve` and `demo`: run the server until SIGINT/SIGTERM, then stop cleanly (exit 0). */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Env } from "../config/env.ts";
import { ConfigError, configWarnings, loadConfig } from "../config/index.ts";
import type { AppConfig } from "../config/types.ts";
import { startSim } from "../sim/index.ts";
import { createLogger, type Logger } from "../util/log.ts";
import { EXIT } from "./help.ts";
import { type RunningServer, startServer } from "./serve.ts";

async function load(env: Env): Promise<AppConfig | number> {
	try {
		return await loadConfig({ env });
	} catch (error) {
		if (error instanceof ConfigError) {
			process.stderr.write(
				`t3code-mcp: configuration error\n${error.message}\n`,
			);
			return EXIT.config;
		}
		throw error;
	}
}

function untilSignal(): Promise<string> {
	return new Promise((resolve) => {
		process.once("SIGINT", () => resolve("SIGINT"));
		process.once("SIGTERM", () => resolve("SIGTERM"));
	});
}

async function runUntilSignal(
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
	for (const warning of configWarnings(config)) log.warn(warning);
	const server = await startServer(config, { log });
	log.info("listening", {
		url: server.mcpUrl,
		machines: config.machines.map((m) => m.name),
		config: config.file,
	});
	return runUntilSignal(signalled, server, log);
}

export async function runDemo(env: Env = process.env): Promise<number> {
	const signalled = untilSignal();
	const sim = await startSim({
		projects: [{ title: "demo", workspaceRoot: "/srv/t3/demo" }],
		stepMs: 250,
		label: "demo",
	});
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-demo-"));
	const file = join(dir, "t3code.toml");
	writeFileSync(
		file,
		[
			"# Written by `t3code-mcp demo`: one simulated machine on loopback.",
			"[machines.demo]",
			`url = "${sim.url}"`,
			'token_env = "T3CODE_DEMO_TOKEN"',
			'projects = ["*"]',
			'model = "claudeAgent/claude-opus-5"',
			"",
		].join("\n"),
	);
	const config = await load({
		...env,
		T3CODE_MCP_CONFIG: file,
		T3CODE_DEMO_TOKEN: sim.token,
		T3CODE_MCP_STATE: env.T3CODE_MCP_STATE || join(dir, "t3code-mcp.sqlite"),
	});
	if (typeof config === "number") {
		await sim.stop();
		return config;
	}
	const log = createLogger(config.server.logLevel);
	const server = await startServer(config, { log });
	const auth = config.server.token
		? ` --header "Authorization: Bearer $T3CODE_MCP_TOKEN"`
		: "";
	process.stdout.write(
		[
			"t3code-mcp demo is running.",
			`  MCP endpoint:  ${server.mcpUrl}`,
			`  T3 simulator:  ${sim.url} (machine "demo", project "demo")`,
			"  Add it to Claude Code:",
			`    claude mcp add --transport http t3code ${server.mcpUrl}${auth}`,
			'  Prompts the simulated agent understands: "ask me …", "approve …", "long task", "fail", "slow", anything else.',
			"  Stop with Ctrl-C.",
			"",
		].join("\n"),
	);
	return runUntilSignal(signalled, server, log, () => sim.stop());
}
