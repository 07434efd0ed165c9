/**
 * The compiled binary (`bun run build` → dist/t3code-mcp), run as a user would: version and
 * help, /healthz against a simulator, no `.env` autoload, the demo end to end through the
 * official MCP client, the container's environment (0.0.0.0, gateway Host, no Origin),
 * SIGTERM with a wait in flight, and the `healthcheck` subcommand.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	Client,
	StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import pkg from "../../package.json" with { type: "json" };
import { type Sim, startSim } from "../../src/sim/index.ts";
import { runToExit } from "../helpers/process.ts";
import {
	cleanEnv,
	ensureBinary,
	freePort,
	type Running,
	simConfig,
	spawnBinary,
	waitForHealthz,
} from "./helpers.ts";

let binary: string;
let sim: Sim;
let dir: string;
const running: Running[] = [];

beforeAll(async () => {
	binary = await ensureBinary();
	sim = await startSim({
		stepMs: 5,
		coalesceMs: 5,
		projects: [{ title: "demo", workspaceRoot: "/srv/t3/demo" }],
	});
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-binary-"));
	writeFileSync(join(dir, "t3code.toml"), simConfig(sim.url));
}, 120_000);

afterAll(async () => {
	await Promise.all(running.map((r) => r.stop()));
	await sim?.stop();
	if (dir) rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], env: Record<string, string> = cleanEnv({})) =>
	runToExit([binary, ...args], { cwd: dir, env });

/** Starts `serve` on a free port against the sim, waits for /healthz; returns it and its URL. */
async function serve(extra: Record<string, string> = {}, cwd = dir) {
	const port = freePort();
	const env = cleanEnv({
		T3CODE_MCP_CONFIG: join(dir, "t3code.toml"),
		T3CODE_MCP_PORT: String(port),
		T3CODE_MCP_STATE: join(
			mkdtempSync(join(dir, "state-")),
			"t3code-mcp.sqlite",
		),
		T3CODE_MCP_LOG_LEVEL: "warn",
		T3_SIM_TOKEN: sim.token,
		...extra,
	});
	const server = spawnBinary(["serve"], { env, cwd });
	running.push(server);
	const url = `http://127.0.0.1:${port}`;
	const health = await waitForHealthz(url, { proc: server.proc });
	return { server, url, port, env, health };
}

async function connect(mcpUrl: string): Promise<Client> {
	const client = new Client({ name: "binary-test", version: "1.0.0" });
	await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
	return client;
}

async function call(
	client: Client,
	name: string,
	args: Record<string, unknown>,
) {
	const result = await client.callTool(
		{ name, arguments: args },
		{ timeout: 60_000, resetTimeoutOnProgress: true },
	);
	expect(result.isError).not.toBe(true);
	return result.structuredContent as Record<string, unknown>;
}

describe("the compiled binary", () => {
	test("--version prints package.json's version", async () => {
		const { code, stdout } = await run(["--version"]);
		expect(code).toBe(0);
		expect(stdout).toBe(`${pkg.version}\n`);
	});

	test("--help lists every command and exits 0", async () => {
		const { code, stdout } = await run(["--help"]);
		expect(code).toBe(0);
		for (const command of ["serve", "check", "sim", "demo", "healthcheck"])
			expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
		expect(stdout).toContain("T3CODE_MCP_CONFIG");
	});

	test("serve answers /healthz with the same version, and the machine comes online", async () => {
		const { url, health } = await serve();
		console.log(`binary: first /healthz 200 after ${health.ms.toFixed(0)} ms`);
		expect(health.body.version).toBe(pkg.version);
		expect(health.body.status).toBeDefined();
		const deadline = Date.now() + 10_000;
		let state: unknown;
		while (Date.now() < deadline) {
			const body = (await (await fetch(`${url}/healthz`)).json()) as {
				machines: Record<string, { state: string }>;
			};
			state = body.machines.sim?.state;
			if (state === "online") break;
			await Bun.sleep(20);
		}
		expect(state).toBe("online");
	});

	test("check against the simulator passes through the binary", async () => {
		const env = cleanEnv({
			T3CODE_MCP_CONFIG: join(dir, "t3code.toml"),
			T3_SIM_TOKEN: sim.token,
			T3CODE_MCP_STATE: join(dir, "check.sqlite"),
		});
		const { code, stdout } = await run(["check"], env);
		expect(stdout).toContain("all checks passed");
		expect(code).toBe(0);
		expect(stdout).not.toContain(sim.token);
	});

	test("a .env in the working directory is ignored", async () => {
		const cwd = mkdtempSync(join(dir, "dotenv-"));
		// Each of these would break the run if it were read: a port nothing can use, a missing
		// config file, and a bearer the request below does not send.
		writeFileSync(
			join(cwd, ".env"),
			"T3CODE_MCP_PORT=1\nT3CODE_MCP_CONFIG=/nonexistent/t3code.toml\nT3CODE_MCP_TOKEN=from-dotenv-0123456789\n",
		);
		writeFileSync(join(cwd, "bunfig.toml"), "[run]\npreload = ['./nope.ts']\n");
		// Control: plain bun does load that .env.
		const control = Bun.spawnSync(
			[process.execPath, "-e", "console.log(process.env.T3CODE_MCP_TOKEN)"],
			{ cwd, env: cleanEnv({}) },
		);
		expect(control.stdout.toString()).toContain("from-dotenv");

		const { url } = await serve({}, cwd);
		const res = await fetch(`${url}/mcp`, {
			method: "POST",
			headers: {
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
			},
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 1,
				method: "tools/list",
				params: {},
			}),
		});
		expect(res.status).toBe(200);
		expect(await res.text()).toContain("t3_dispatch");
	});

	test("the demo dispatch completes through the binary", async () => {
		const port = freePort();
		const demo = spawnBinary(["demo"], {
			cwd: dir,
			env: cleanEnv({
				T3CODE_MCP_PORT: String(port),
				T3CODE_MCP_STATE: join(dir, "demo.sqlite"),
				T3CODE_MCP_LOG_LEVEL: "warn",
			}),
		});
		running.push(demo);
		const [, mcpUrl] = await demo.waitForStdout(/MCP endpoint:\s+(\S+)/);
		expect(mcpUrl).toBe(`http://127.0.0.1:${port}/mcp`);
		expect(demo.stdout()).toContain("claude mcp add --transport http t3code");
		const client = await connect(mcpUrl as string);
		try {
			const dispatched = await call(client, "t3_dispatch", {
				machine: "demo",
				project: "demo",
				prompt: "say hello",
			});
			expect(dispatched.thread_id).toBeString();
			const waited = await call(client, "t3_wait", {
				thread_id: dispatched.thread_id,
				timeout: 30,
			});
			expect(waited.outcome).toBe("completed");
			expect(waited.message).toBeString();
		} finally {
			await client.close();
		}
		expect(await demo.stop()).toBe(0);
	}, 60_000);

	test("with the image's environment it answers POST /mcp for Host t3code-mcp:8000 without Origin", async () => {
		const { url } = await serve({ T3CODE_MCP_HOST: "0.0.0.0" });
		const post = (body: unknown) =>
			fetch(`${url}/mcp`, {
				method: "POST",
				headers: {
					host: "t3code-mcp:8000",
					"content-type": "application/json",
					accept: "application/json, text/event-stream",
				},
				body: JSON.stringify(body),
			});
		const init = await post({
			jsonrpc: "2.0",
			id: 1,
			method: "initialize",
			params: {
				protocolVersion: "2025-11-25",
				capabilities: {},
				clientInfo: { name: "gateway", version: "1" },
			},
		});
		expect(init.status).toBe(200);
		expect(await init.text()).toContain('"serverInfo"');
		const list = await post({
			jsonrpc: "2.0",
			id: 2,
			method: "tools/list",
			params: {},
		});
		expect(list.status).toBe(200);
		const text = await list.text();
		for (const tool of [
			"t3_machines",
			"t3_projects",
			"t3_dispatch",
			"t3_wait",
			"t3_thread",
			"t3_answer",
			"t3_interrupt",
			"t3_watch",
		]) {
			expect(text).toContain(`"${tool}"`);
		}
		// Still refused: a browser Origin that is not allowed.
		const withOrigin = await fetch(`${url}/mcp`, {
			method: "POST",
			headers: {
				host: "t3code-mcp:8000",
				origin: "https://evil.example",
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
			},
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 3,
				method: "tools/list",
				params: {},
			}),
		});
		expect(withOrigin.status).toBe(403);
	});

	test("healthcheck exits 0 against a running server and 1 when nothing listens", async () => {
		const { port } = await serve({ T3CODE_MCP_HOST: "0.0.0.0" });
		const ok = await run(
			["healthcheck"],
			cleanEnv({ T3CODE_MCP_HOST: "0.0.0.0", T3CODE_MCP_PORT: String(port) }),
		);
		expect(ok.code).toBe(0);
		const none = await run(
			["healthcheck"],
			cleanEnv({ T3CODE_MCP_PORT: String(freePort()) }),
		);
		expect(none.code).toBe(1);
		expect(none.stderr).toContain("did not answer");
	});

	test("SIGTERM with a t3_wait in flight: the wait gets a timeout result and the process exits 0 within 5 s", async () => {
		const { server, url } = await serve();
		const client = await connect(`${url}/mcp`);
		try {
			const dispatched = await call(client, "t3_dispatch", {
				machine: "sim",
				project: "demo",
				prompt: "long task",
			});
			const started = performance.now();
			const wait = call(client, "t3_wait", {
				thread_id: dispatched.thread_id,
				timeout: 120,
			});
			await Bun.sleep(500);
			expect(server.proc.exitCode).toBeNull();
			const killedAt = performance.now();
			server.proc.kill("SIGTERM");
			const result = await wait;
			expect(result.outcome).toBe("timeout");
			expect(result.thread_id).toBe(dispatched.thread_id);
			const code = await server.proc.exited;
			const stopMs = performance.now() - killedAt;
			console.log(
				`binary: SIGTERM → exit ${code} in ${stopMs.toFixed(0)} ms (wait was in flight ${(killedAt - started).toFixed(0)} ms)`,
			);
			expect(code).toBe(0);
			expect(stopMs).toBeLessThan(5_000);
		} finally {
			await client.close().catch(() => {});
		}
	}, 30_000);
});
