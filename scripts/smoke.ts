#!/usr/bin/env bun
/**
 * Smoke test of a running t3code-mcp: dispatch one prompt, wait for its outcome, print both.
 *
 *   bun scripts/smoke.ts <mcp-url> <machine> <project> [prompt]
 *   T3CODE_MCP_TOKEN=… bun scripts/smoke.ts http://127.0.0.1:8000/mcp mac my-project
 *
 * Exit 0 when the run completed (or asked a question), 1 otherwise, 2 on bad arguments.
 */
import {
	Client,
	StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";

const [
	url,
	machine,
	project,
	prompt = "Reply with the word pong and nothing else.",
] = process.argv.slice(2);
if (!url || !machine || !project) {
	process.stderr.write(
		"usage: bun scripts/smoke.ts <mcp-url> <machine> <project> [prompt]\n  (T3CODE_MCP_TOKEN is sent as the bearer when set)\n",
	);
	process.exit(2);
}

const headers: Record<string, string> = { "X-Conversation-Origin": "smoke" };
if (process.env.T3CODE_MCP_TOKEN)
	headers.Authorization = `Bearer ${process.env.T3CODE_MCP_TOKEN}`;

async function call(
	client: Client,
	name: string,
	args: Record<string, unknown>,
) {
	const result = await client.callTool(
		{ name, arguments: args },
		{
			timeout: 3_700_000,
			resetTimeoutOnProgress: true,
			onprogress: (p) =>
				process.stderr.write(`  … ${p.message ?? `${p.progress}`}\n`),
		},
	);
	const text = (result.content as { type: string; text?: string }[])
		.map((c) => c.text ?? "")
		.join("\n");
	if (result.isError) throw new Error(`${name} failed: ${text}`);
	return result.structuredContent as Record<string, unknown>;
}

const client = new Client({ name: "t3code-mcp-smoke", version: "1.0.0" });
const started = performance.now();
try {
	await client.connect(
		new StreamableHTTPClientTransport(new URL(url), {
			requestInit: { headers },
		}),
	);
	const dispatched = await call(client, "t3_dispatch", {
		machine,
		project,
		prompt,
		watch: false,
	});
	process.stdout.write(
		`dispatched thread ${dispatched.thread_id} (run ${dispatched.run_id}, ${dispatched.run_status})\n`,
	);
	let waited = await call(client, "t3_wait", {
		thread_id: dispatched.thread_id,
	});
	while (waited.outcome === "timeout") {
		process.stdout.write(
			`still running after ${waited.elapsed_s} s, waiting again\n`,
		);
		waited = await call(client, "t3_wait", { thread_id: dispatched.thread_id });
	}
	process.stdout.write(`${JSON.stringify(waited, null, 2)}\n`);
	process.stdout.write(
		`outcome ${waited.outcome} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
	);
	process.exitCode =
		waited.outcome === "completed" || waited.outcome === "question" ? 0 : 1;
} catch (error) {
	process.stderr.write(`smoke: ${(error as Error).message}\n`);
	process.exitCode = 1;
} finally {
	await client.close().catch(() => {});
}
