/**
 * Runs the connector as a separate process (`bun run src/index.ts serve`, or a built binary),
 * for tests that kill it with SIGKILL or SIGTERM. Loopback, ephemeral port, explicit env.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

export async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const port = (server.address() as { port: number }).port;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

export interface Finished {
	code: number;
	stdout: string;
	stderr: string;
}

/**
 * Runs a command to its end with exactly `env` (nothing inherited) and returns its exit code and
 * output. `timeout` (ms) kills it, so a hung child fails the test instead of stalling it.
 */
export async function runToExit(
	cmd: string[],
	options: { cwd: string; env: Record<string, string>; timeout?: number },
): Promise<Finished> {
	const proc = Bun.spawn(cmd, {
		cwd: options.cwd,
		env: options.env,
		stdout: "pipe",
		stderr: "pipe",
		timeout: options.timeout,
	});
	const [stdout, stderr, code] = await Promise.all([
		new Response(proc.stdout).text(),
		new Response(proc.stderr).text(),
		proc.exited,
	]);
	return { code, stdout, stderr };
}

export interface ServerProcess {
	url: string;
	mcpUrl: string;
	proc: ReturnType<typeof Bun.spawn>;
	stderr(): string;
	kill(signal?: NodeJS.Signals | number): Promise<number>;
}

export interface ProcessOptions {
	dir: string;
	/** Each machine's token through `token_env` (set to `token`), or its `token_file`. */
	machines: ({ name: string; url: string; projects?: string[] } & (
		| { token: string }
		| { tokenFile: string }
	))[];
	statePath: string;
	env?: Record<string, string>;
	/** Command to run instead of the source entry (e.g. the compiled binary). */
	command?: string[];
	/** More of `t3code.toml` after the machines (e.g. `[clients.*]` tables). */
	moreToml?: string;
}

const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * A port picked by `freePort` can be taken by another process before the server binds it (a
 * busy box running other suites): the server then exits saying so, and a fresh port is tried.
 */
export async function startServerProcess(
	options: ProcessOptions,
): Promise<ServerProcess> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await startOnce(options);
		} catch (error) {
			const raced =
				!options.env?.T3CODE_MCP_PORT &&
				error instanceof Error &&
				error.message.includes("the port is in use");
			if (!raced || attempt >= 3) throw error;
		}
	}
}

async function startOnce(options: ProcessOptions): Promise<ServerProcess> {
	const file = join(options.dir, "t3code.toml");
	const env: Record<string, string> = {
		PATH: process.env.PATH ?? "",
		HOME: process.env.HOME ?? options.dir,
		T3CODE_MCP_CONFIG: file,
		T3CODE_MCP_STATE: options.statePath,
		T3CODE_MCP_HOST: "127.0.0.1",
		T3CODE_MCP_LOG_LEVEL: "warn",
		...options.env,
	};
	const lines: string[] = [];
	for (const m of options.machines) {
		const tokenEnv = `T3_${m.name.toUpperCase()}_TOKEN`;
		if ("token" in m) env[tokenEnv] = m.token;
		lines.push(
			`[machines.${m.name}]`,
			`url = "${m.url}"`,
			"tokenFile" in m
				? `token_file = ${JSON.stringify(m.tokenFile)}`
				: `token_env = "${tokenEnv}"`,
			`projects = ${JSON.stringify(m.projects ?? ["*"])}`,
			'model = "claudeAgent/claude-opus-5"',
			"",
		);
	}
	if (options.moreToml) lines.push(options.moreToml);
	writeFileSync(file, lines.join("\n"));
	const port = options.env?.T3CODE_MCP_PORT
		? Number(options.env.T3CODE_MCP_PORT)
		: await freePort();
	env.T3CODE_MCP_PORT = String(port);
	const proc = Bun.spawn(
		options.command ?? [
			process.execPath,
			"run",
			join(ROOT, "src/index.ts"),
			"serve",
		],
		{
			cwd: options.dir,
			env,
			stdout: "pipe",
			stderr: "pipe",
		},
	);
	let errText = "";
	void (async () => {
		const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
		const decoder = new TextDecoder();
		for (;;) {
			const { value, done } = await reader.read();
			if (done) break;
			errText += decoder.decode(value);
		}
	})();
	const url = `http://127.0.0.1:${port}`;
	const deadline = Date.now() + 15_000;
	for (;;) {
		if (proc.exitCode !== null)
			throw new Error(`server exited with ${proc.exitCode}: ${errText}`);
		try {
			const response = await fetch(`${url}/healthz`);
			if (response.status === 200) break;
		} catch {
			// not listening yet
		}
		if (Date.now() > deadline) {
			proc.kill(9);
			throw new Error(`server did not answer /healthz: ${errText}`);
		}
		await Bun.sleep(20);
	}
	return {
		url,
		mcpUrl: `${url}/mcp`,
		proc,
		stderr: () => errText,
		async kill(signal = "SIGTERM") {
			proc.kill(signal);
			return proc.exited;
		},
	};
}
