/**
 * MCP Tasks over stdio (issue 19): the real `t3code-mcp stdio` speaking 2026-07-28 JSON lines
 * (each request carrying its own `_meta` envelope, as over HTTP) answers a waiting dispatch with
 * a task, serves `tasks/get`, and keeps its tasks in the state file (a second launch answers for
 * a task of the first), or in memory when a server holds that file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { startServerProcess } from "../helpers/process.ts";
import { until } from "../helpers/stack.ts";
import { MODERN, TASKS } from "../helpers/tasks-client.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");

let sim: Sim;
let dir: string;
beforeAll(async () => {
	sim = await startSim({ stepMs: 5, coalesceMs: 5 });
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-tasks-stdio-"));
});
afterAll(async () => {
	await sim.stop();
	rmSync(dir, { recursive: true, force: true });
});

function home(name: string) {
	const base = join(dir, name);
	const xdgConfig = join(base, "config");
	const xdgState = join(base, "state");
	mkdirSync(join(xdgConfig, "t3code-mcp"), { recursive: true });
	writeFileSync(
		join(xdgConfig, "t3code-mcp", "t3code.toml"),
		`[machines.demo]\nurl = "${sim.url}"\ntoken_env = "T3_DEMO_TOKEN"\nprojects = ["*"]\nmodel = "claudeAgent/claude-opus-5"\n`,
	);
	return {
		env: {
			PATH: process.env.PATH ?? "",
			HOME: base,
			XDG_CONFIG_HOME: xdgConfig,
			XDG_STATE_HOME: xdgState,
			T3_DEMO_TOKEN: sim.token,
			T3CODE_MCP_LOG_LEVEL: "error",
		} as Record<string, string>,
		statePath: join(xdgState, "t3code-mcp", "t3code-mcp.sqlite"),
	};
}

type Reply = { id?: number; result?: Record<string, unknown>; error?: unknown };

/** `t3code-mcp stdio` driven with raw 2026-07-28 JSON lines. */
function launch(env: Record<string, string>) {
	const proc = Bun.spawn([process.execPath, "run", ENTRY, "stdio"], {
		env,
		cwd: "/",
		stdin: "pipe",
		stdout: "pipe",
		stderr: "pipe",
	});
	const replies = new Map<number, Reply>();
	void (async () => {
		const decoder = new TextDecoder();
		let buffer = "";
		for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
			buffer += decoder.decode(chunk, { stream: true });
			let nl = buffer.indexOf("\n");
			while (nl >= 0) {
				const line = buffer.slice(0, nl).trim();
				buffer = buffer.slice(nl + 1);
				if (line) {
					const message = JSON.parse(line) as Reply;
					if (typeof message.id === "number") replies.set(message.id, message);
				}
				nl = buffer.indexOf("\n");
			}
		}
	})();
	let next = 1;
	const request = async (method: string, params: Record<string, unknown>) => {
		const id = next++;
		const line = `${JSON.stringify({
			jsonrpc: "2.0",
			id,
			method,
			params: {
				...params,
				_meta: {
					"io.modelcontextprotocol/protocolVersion": MODERN,
					"io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
					"io.modelcontextprotocol/clientCapabilities": {
						extensions: { [TASKS]: {} },
					},
				},
			},
		})}\n`;
		proc.stdin.write(line);
		proc.stdin.flush();
		await until(() => replies.has(id), 15_000, `reply ${id} to ${method}`);
		return replies.get(id) as Reply;
	};
	return {
		request,
		async close() {
			proc.stdin.end();
			await proc.exited;
		},
	};
}

async function openTask(session: ReturnType<typeof launch>) {
	await until(
		async () => {
			const m = await session.request("tools/call", {
				name: "t3_machines",
				arguments: {},
			});
			const data = m.result?.structuredContent as {
				machines: { state: string }[];
			};
			return data?.machines[0]?.state === "online";
		},
		15_000,
		"machine online",
	);
	const handle = await session.request("tools/call", {
		name: "t3_dispatch",
		arguments: {
			machine: "demo",
			project: "demo",
			prompt: "long task",
			wait: true,
		},
	});
	expect(handle.result?.resultType).toBe("task");
	const taskId = handle.result?.taskId as string;
	const got = await session.request("tasks/get", { taskId });
	const message = String(got.result?.statusMessage ?? "");
	const threadId = message.match(/thread (\S+):/)?.[1] as string;
	return { taskId, threadId };
}

async function untilCompleted(
	session: ReturnType<typeof launch>,
	taskId: string,
) {
	let task: Record<string, unknown> | undefined;
	await until(
		async () => {
			task = (await session.request("tasks/get", { taskId })).result;
			return task?.status === "completed";
		},
		15_000,
		"task completed",
	);
	return task as {
		result: { structuredContent: { wait: { outcome: string } } };
	};
}

describe("stdio", () => {
	test("a waiting dispatch is a task; it is kept in the state file, so the next launch answers for it", async () => {
		const h = home("own");
		const first = launch(h.env);
		const { taskId, threadId } = await openTask(first);
		await first.close();
		sim.finishRun(threadId);
		const second = launch(h.env);
		try {
			const done = await untilCompleted(second, taskId);
			expect(done.result.structuredContent.wait.outcome).toBe("completed");
		} finally {
			await second.close();
		}
	}, 40_000);

	test("beside a server holding the state file: tasks in memory, served the same way", async () => {
		const h = home("beside");
		const serverDir = join(dir, "beside-server");
		mkdirSync(serverDir, { recursive: true });
		const server = await startServerProcess({
			dir: serverDir,
			machines: [{ name: "demo", url: sim.url, token: sim.token }],
			statePath: h.statePath,
		});
		const session = launch(h.env);
		try {
			const { taskId, threadId } = await openTask(session);
			sim.finishRun(threadId);
			const done = await untilCompleted(session, taskId);
			expect(done.result.structuredContent.wait.outcome).toBe("completed");
		} finally {
			await session.close();
			expect(await server.kill("SIGTERM")).toBe(0);
		}
	}, 40_000);
});
