/**
 * `demo`: the server plus an embedded simulated T3 machine "demo" (project "demo") on
 * loopback, with a throwaway config and state unless T3CODE_MCP_STATE says otherwise.
 * Loaded only for this command, so `serve` never pays for the simulator.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Env } from "../config/env.ts";
import { simPromptLines } from "../sim/agent/prompts.ts";
import { startSim } from "../sim/index.ts";
import { createLogger } from "../util/log.ts";
import {
	load,
	runUntilSignal,
	startOrExplain,
	untilSignal,
} from "./run-server.ts";
import { startServer } from "./serve.ts";

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
	const server = await startOrExplain(() => startServer(config, { log }));
	if (typeof server === "number") {
		await sim.stop();
		return server;
	}
	const auth = config.server.token
		? ` --header "Authorization: Bearer $T3CODE_MCP_TOKEN"`
		: "";
	process.stdout.write(
		[
			"t3code-mcp demo is running.",
			`  MCP endpoint:  ${server.mcpUrl}`,
			`  Console:       ${server.url}/console (the fleet at a glance, live${config.server.token ? "; sign in with T3CODE_MCP_TOKEN" : ""})`,
			`  T3 simulator:  ${sim.url} (machine "demo", project "demo")`,
			"  Add it to Claude Code:",
			`    claude mcp add --transport http t3code ${server.mcpUrl}${auth}`,
			"  Prompts the simulated agent understands (anywhere in the message, any case):",
			...simPromptLines("    "),
			'  As in T3, commands and edits wait for t3_answer only with runtime_mode "approval-required" (commands also with "auto-accept-edits"); the default full-access never asks.',
			'  Try t3_models on "demo": ready models and options (e.g. codex/gpt-5.6-sol with reasoningEffort), one not signed in (opencode), one without plan mode (grok). Steer or restart a "long task" with t3_dispatch mode (model restartsteer/steady steers only by restart: delivered_as says "restarted").',
			'  Parallel work in one project: dispatch "edit a file" three times with workspace "worktree" (each its own branch and worktree), then t3_diff each: only its own change; "git status" in the root checkout shows it untouched. fork_of a thread and ask "what do you remember"; "open a pull request" links one (t3_thread pull_requests).',
			"  Then try t3_threads (find threads), t3_diff (what a run changed), t3_manage (rename, archive, settle, stop_session), t3_delete.",
			"  Stop with Ctrl-C.",
			"",
		].join("\n"),
	);
	return runUntilSignal(signalled, server, log, () => sim.stop());
}
