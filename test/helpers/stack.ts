/**
 * Test harness: simulated T3 machines + the real server on loopback (ephemeral ports, temp
 * state), and the official MCP client in either protocol era. Everything it starts, `stop()` ends.
 *
 * With T3CODE_MCP_TEST_TRANSPORT=stdio (test/integration/stdio-tools.test.ts sets it to run tool
 * tests again over stdio), `client()` instead launches the real `t3code-mcp stdio` as a client
 * would (XDG paths in the stack's directory, working directory `/`) and speaks to it through the
 * official client's stdio transport; no in-process server runs, so `server` is unavailable.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	Client,
	StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type RunningServer, startServer } from "../../src/cli/serve.ts";
import { fullRights } from "../../src/config/clients.ts";
import type {
	AppConfig,
	ApprovalsConfig,
	ClientConfig,
	MachineConfig,
	ServerSettings,
} from "../../src/config/types.ts";
import { type Sim, type SimOptions, startSim } from "../../src/sim/index.ts";
import type { StartFaults } from "../../src/threads/dispatch/held-start.ts";
import type { Clock } from "../../src/util/clock.ts";
import { type Logger, silentLogger } from "../../src/util/log.ts";

export type Era = "legacy" | "modern";
export const ERAS: Era[] = ["legacy", "modern"];

/** How `stack.client()` reaches the tools (see the top of this file). */
export type McpTransport = "http" | "stdio";
export const TEST_TRANSPORT: McpTransport =
	process.env.T3CODE_MCP_TEST_TRANSPORT === "stdio" ? "stdio" : "http";

export interface MachineSpec {
	name: string;
	sim?: SimOptions;
	/** Use this URL instead of starting a sim (e.g. an unreachable port). */
	url?: string;
	projects?: string[];
	/** Override the token the machine uses (default: the sim's full token); null = unset env var. */
	token?: string | null;
	/** The machine reads its token from this file (`token_file`) instead of `token_env`. */
	tokenFile?: string;
	model?: string;
	options?: { id: string; value: string | boolean }[];
	/** `max_active_runs`: busy threads on the machine at once (default unlimited). */
	maxActiveRuns?: number;
}

/**
 * The machine "demo" on a sim holding the sim's default project ("demo" at /srv/t3/demo) and
 * `more` ([title, workspace root]), of which the connector shows those its `allow` list names.
 */
export function demoMachine(
	more: [title: string, workspaceRoot: string][],
	allow: string[],
): MachineSpec {
	return {
		name: "demo",
		sim: {
			projects: [
				{ title: "demo", workspaceRoot: "/srv/t3/demo" },
				...more.map(([title, workspaceRoot]) => ({ title, workspaceRoot })),
			],
		},
		projects: allow,
	};
}

export interface StackOptions {
	machines?: MachineSpec[];
	/** `[clients.*]`: callers with their own bearer and rights (none: open, full rights). */
	clients?: ClientConfig[];
	/** `[approvals]`: approval links for people (with `server.publicUrl`). */
	approvals?: ApprovalsConfig;
	server?: Partial<ServerSettings>;
	/** Reuse a state file (restart tests). */
	statePath?: string;
	progressIntervalMs?: number;
	/** How long `t3_threads` waits for a machine's message search. */
	searchTimeoutMs?: number;
	clock?: Clock;
	retryScheduleS?: number[];
	log?: Logger;
	/** The `pollIntervalMs` MCP tasks suggest (default 1 s). */
	taskPollIntervalMs?: number;
	/** How many MCP tasks the server keeps at most (default 10 000). */
	maxTasks?: number;
	/** Deadline for POST /mcp bodies (default 30 s). */
	bodyTimeoutMs?: number;
	/** Fault points around a held dispatch's record and send (src/threads/dispatch/held-start.ts). */
	heldFaults?: StartFaults;
}

export interface Stack {
	server: RunningServer;
	sims: Map<string, Sim>;
	sim(name?: string): Sim;
	statePath: string;
	dir: string;
	client(options?: {
		era?: Era;
		headers?: Record<string, string>;
	}): Promise<Client>;
	/** Stops the server only (sims and state stay), for restart tests. */
	stopServer(): Promise<void>;
	/**
	 * A new server on the same state file and machines (the connector restarting); `change`
	 * edits a copy of the config first (e.g. narrower `projects`: an operator's config change).
	 */
	restartServer(change?: (config: AppConfig) => void): Promise<void>;
	stop(): Promise<void>;
}

/** Starts a simulator for each spec without a `url` (into `sims`); each machine's config and token. */
async function startMachines(
	specs: MachineSpec[],
	sims: Map<string, Sim>,
): Promise<{ machine: MachineConfig; token: string | undefined }[]> {
	const started: { machine: MachineConfig; token: string | undefined }[] = [];
	for (const spec of specs) {
		let url = spec.url;
		let token: string | undefined;
		if (!url) {
			const sim = await startSim({ stepMs: 5, coalesceMs: 5, ...spec.sim });
			sims.set(spec.name, sim);
			url = sim.url;
			token = sim.token;
		}
		if (spec.token !== undefined) token = spec.token ?? undefined;
		started.push({ machine: machineConfig(spec, url, token), token });
	}
	return started;
}

export function machineConfig(
	spec: MachineSpec,
	url: string,
	token: string | undefined,
): MachineConfig {
	const slash = spec.model?.indexOf("/") ?? -1;
	return {
		name: spec.name,
		url,
		tokenEnv:
			spec.tokenFile === undefined
				? `T3_${spec.name.toUpperCase()}_TOKEN`
				: null,
		tokenFile: spec.tokenFile ?? null,
		token: spec.tokenFile === undefined ? token : undefined,
		projects: spec.projects ?? ["*"],
		model:
			spec.model && slash > 0
				? {
						instanceId: spec.model.slice(0, slash),
						model: spec.model.slice(slash + 1),
					}
				: { instanceId: "claudeAgent", model: "claude-opus-5" },
		options: spec.options ?? [],
		...(spec.maxActiveRuns === undefined
			? {}
			: { maxActiveRuns: spec.maxActiveRuns }),
	};
}

/** Server settings for a test server on loopback (ephemeral port), with overrides. */
export function testServerSettings(
	statePath: string,
	overrides: Partial<ServerSettings> = {},
): ServerSettings {
	return {
		host: "127.0.0.1",
		port: 0,
		statePath,
		token: undefined,
		allowedHosts: [],
		allowedOrigins: [],
		hookUrl: undefined,
		hookToken: undefined,
		hookSecret: undefined,
		waitTimeoutS: 600,
		taskTtlS: 86_400,
		pingTimeoutS: 10,
		logLevel: "error",
		auditDays: 90,
		...overrides,
	};
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
	if (TEST_TRANSPORT === "stdio") return startStdioStack(options);
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-test-"));
	const statePath = options.statePath ?? join(dir, "state.sqlite");
	const sims = new Map<string, Sim>();
	const specs = options.machines ?? [{ name: "demo" }];
	const machines = (await startMachines(specs, sims)).map((m) => m.machine);
	const makeConfig = (): AppConfig => ({
		file: join(dir, "t3code.toml"),
		machines: machines.map((m) => ({ ...m, projects: [...m.projects] })),
		server: testServerSettings(statePath, options.server),
		clients: options.clients ?? [],
		approvals: options.approvals ?? null,
	});
	const serviceOptions = {
		log: options.log ?? silentLogger,
		progressIntervalMs: options.progressIntervalMs,
		searchTimeoutMs: options.searchTimeoutMs,
		clock: options.clock,
		retryScheduleS: options.retryScheduleS,
		taskPollIntervalMs: options.taskPollIntervalMs,
		maxTasks: options.maxTasks,
		bodyTimeoutMs: options.bodyTimeoutMs,
		heldFaults: options.heldFaults,
	};
	let server = await startServer(makeConfig(), serviceOptions);
	const clients: Client[] = [];
	const stack: Stack = {
		get server() {
			return server;
		},
		sims,
		sim(name) {
			const sim = name ? sims.get(name) : sims.values().next().value;
			if (!sim) throw new Error(`no sim ${name}`);
			return sim;
		},
		statePath,
		dir,
		async client({ era = "legacy", headers = {} } = {}) {
			const client = new Client(
				{ name: "t3code-mcp-test", version: "1.0.0" },
				era === "modern" ? { versionNegotiation: { mode: "auto" } } : {},
			);
			const token = server.services.config.server.token;
			const authorization: Record<string, string> = token
				? { Authorization: `Bearer ${token}` }
				: {};
			await client.connect(
				new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
					requestInit: { headers: { ...authorization, ...headers } },
				}),
			);
			clients.push(client);
			return client;
		},
		async stopServer() {
			await server.stop();
		},
		async restartServer(change) {
			await server.stop();
			const config = makeConfig();
			change?.(config);
			server = await startServer(config, serviceOptions);
		},
		async stop() {
			await Promise.all(clients.map((c) => c.close().catch(() => {})));
			await server.stop();
			await Promise.all([...sims.values()].map((s) => s.stop()));
			rmSync(dir, { recursive: true, force: true });
		},
	};
	return stack;
}

const ENTRY = join(import.meta.dir, "../../src/index.ts");

/** A quoted TOML string (JSON string escapes are valid TOML basic-string escapes). */
const tomlString = (value: string) => JSON.stringify(value);

/** The stack's machines as the `t3code.toml` a user would write. */
function configToml(machines: MachineConfig[]): string {
	return machines
		.flatMap((m) => [
			`[machines.${tomlString(m.name)}]`,
			`url = ${tomlString(m.url)}`,
			m.tokenFile !== null
				? `token_file = ${tomlString(m.tokenFile)}`
				: `token_env = ${tomlString(m.tokenEnv ?? "")}`,
			`projects = [${m.projects.map(tomlString).join(", ")}]`,
			...(m.model
				? [`model = ${tomlString(`${m.model.instanceId}/${m.model.model}`)}`]
				: []),
			`options = { ${m.options.map((o) => `${tomlString(o.id)} = ${JSON.stringify(o.value)}`).join(", ")} }`,
			...(m.maxActiveRuns ? [`max_active_runs = ${m.maxActiveRuns}`] : []),
			"",
		])
		.join("\n");
}

/** The stack over stdio: sims in this process, the server a `t3code-mcp stdio` child per client. */
export async function startStdioStack(options: StackOptions): Promise<Stack> {
	const unsupported: string[] = (
		[
			"statePath",
			"progressIntervalMs",
			"searchTimeoutMs",
			"clock",
			"retryScheduleS",
			"log",
			"taskPollIntervalMs",
			"maxTasks",
			"bodyTimeoutMs",
			"approvals",
		] as const
	).filter((k) => options[k] !== undefined);
	const {
		waitTimeoutS,
		pingTimeoutS,
		hookUrl,
		hookToken,
		hookSecret,
		...rest
	} = options.server ?? {};
	unsupported.push(...Object.keys(rest));
	if (unsupported.length > 0) {
		throw new Error(
			`startStack over stdio cannot apply ${unsupported.join(", ")} (the server runs in another process): leave this test file to HTTP`,
		);
	}
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-test-"));
	const sims = new Map<string, Sim>();
	const env: Record<string, string> = {
		PATH: process.env.PATH ?? "",
		HOME: dir,
		XDG_CONFIG_HOME: join(dir, "config"),
		XDG_STATE_HOME: join(dir, "state"),
		T3CODE_MCP_LOG_LEVEL: "error",
	};
	if (waitTimeoutS !== undefined)
		env.T3CODE_MCP_WAIT_TIMEOUT_S = String(waitTimeoutS);
	if (pingTimeoutS !== undefined)
		env.T3CODE_MCP_PING_TIMEOUT_S = String(pingTimeoutS);
	if (hookUrl) env.T3CODE_MCP_HOOK_URL = hookUrl;
	if (hookToken) env.T3CODE_MCP_HOOK_TOKEN = hookToken;
	if (hookSecret) env.T3CODE_MCP_HOOK_SECRET = hookSecret;
	const machines: MachineConfig[] = [];
	for (const { machine, token } of await startMachines(
		options.machines ?? [{ name: "demo" }],
		sims,
	)) {
		if (token !== undefined && machine.tokenEnv !== null)
			env[machine.tokenEnv] = token;
		machines.push(machine);
	}
	mkdirSync(join(dir, "config", "t3code-mcp"), { recursive: true });
	writeFileSync(
		join(dir, "config", "t3code-mcp", "t3code.toml"),
		configToml(machines),
	);
	const clients: Client[] = [];
	const unavailable = (what: string) =>
		new Error(
			`stack.${what}: no in-process server when the tools run over stdio`,
		);
	return {
		get server(): RunningServer {
			throw unavailable("server");
		},
		sims,
		sim(name) {
			const sim = name ? sims.get(name) : sims.values().next().value;
			if (!sim) throw new Error(`no sim ${name}`);
			return sim;
		},
		statePath: join(dir, "state", "t3code-mcp", "t3code-mcp.sqlite"),
		dir,
		async client({ era = "legacy", headers = {} } = {}) {
			// One process holds the state file; a second would run on in-memory state.
			if (clients.length > 0 || Object.keys(headers).length > 0) {
				throw new Error(
					"a stdio stack serves one client, without HTTP headers: leave this test to HTTP",
				);
			}
			const transport = new StdioClientTransport({
				command: process.execPath,
				args: ["run", ENTRY, "stdio"],
				env,
				cwd: "/",
				stderr: "pipe",
			});
			transport.stderr?.on("data", () => {}); // drained; the level is "error"
			const client = new Client(
				{ name: "t3code-mcp-test", version: "1.0.0" },
				era === "modern" ? { versionNegotiation: { mode: "auto" } } : {},
			);
			await client.connect(transport);
			clients.push(client);
			// Read by stdio-tools.test.ts: proof that this run really went over stdio.
			console.log(`[stdio] t3code-mcp stdio pid ${transport.pid}`);
			return client;
		},
		async stopServer() {
			throw unavailable("stopServer");
		},
		async restartServer() {
			throw unavailable("restartServer");
		},
		async stop() {
			await Promise.all(clients.map((c) => c.close().catch(() => {})));
			await Promise.all([...sims.values()].map((s) => s.stop()));
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

export interface CallOutcome<T = Record<string, unknown>> {
	isError: boolean;
	data: T;
	text: string;
}

export async function callTool<T = Record<string, unknown>>(
	client: Client,
	name: string,
	args: Record<string, unknown> = {},
	options: { onprogress?: (p: unknown) => void; signal?: AbortSignal } = {},
): Promise<CallOutcome<T>> {
	const result = await client.callTool(
		{ name, arguments: args },
		{
			onprogress: options.onprogress,
			resetTimeoutOnProgress: true,
			timeout: 60_000,
			signal: options.signal,
		},
	);
	const content = (result.content ?? []) as { type: string; text?: string }[];
	const text = content.map((c) => c.text ?? "").join("\n");
	return {
		isError: result.isError === true,
		data: (result.structuredContent ?? {}) as T,
		text,
	};
}

/** Polls a condition (for state that has no event to await), bounded by a deadline. */
export async function until(
	predicate: () => boolean | Promise<boolean>,
	timeoutMs = 10_000,
	what = "condition",
) {
	const deadline = Date.now() + timeoutMs;
	while (!(await predicate())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await Bun.sleep(5);
	}
}

/**
 * Starts a thread directly on a sim through the protocol client (not through our MCP tools),
 * e.g. in a project the connector's allowlist hides. Returns the thread id.
 */
export async function launchOnSim(
	sim: Sim,
	projectTitle: string,
	prompt: string,
): Promise<string> {
	const { createMachine } = await import("../../src/t3/connect/machine.ts");
	const machine = createMachine(
		machineConfig({ name: "direct", projects: ["*"] }, sim.url, sim.token),
		{
			log: silentLogger,
		},
	);
	machine.start();
	try {
		await machine.ready(10_000);
		const project = machine.projects().find((p) => p.title === projectTitle);
		if (!project) throw new Error(`no project ${projectTitle}`);
		const threadId = crypto.randomUUID();
		await machine.launchThread({
			commandId: crypto.randomUUID(),
			creationSource: "mcp",
			threadId,
			projectId: project.id,
			title: prompt,
			modelSelection: { instanceId: "codex", model: "gpt-5.6-sol" },
			runtimeMode: "full-access",
			interactionMode: "default",
			workspaceStrategy: { type: "root" },
			initialMessage: {
				messageId: crypto.randomUUID(),
				text: prompt,
				attachments: [],
			},
		});
		return threadId;
	} finally {
		await machine.stop();
	}
}

/** The payloads of the requests with this RPC tag (and command `type`) the sim received while recording. */
export function simRequests(
	sim: Sim,
	tag: string,
	type?: string,
): Record<string, unknown>[] {
	return sim
		.frames()
		.filter((f) => f.dir === "recv")
		.flatMap(
			(f) =>
				(Array.isArray(f.frame) ? f.frame : [f.frame]) as {
					_tag?: string;
					tag?: string;
					payload?: Record<string, unknown>;
				}[],
		)
		.filter(
			(m) =>
				m._tag === "Request" &&
				m.tag === tag &&
				(type === undefined || m.payload?.type === type),
		)
		.map((m) => m.payload ?? {});
}

/** The `afterSequence` of every `subscribeShell` request the sim received while recording. */
export function shellSubscriptions(sim: Sim): (number | undefined)[] {
	return simRequests(sim, "orchestration.subscribeShell").map(
		(p) => p.afterSequence as number | undefined,
	);
}

/** A `[clients.*]` entry: every right unless narrowed, its token in `<NAME>_TOKEN`. */
export function testClient(
	name: string,
	token: string,
	rights: Partial<ClientConfig> = {},
): ClientConfig {
	return {
		...fullRights(name, token),
		tokenEnv: `${name.toUpperCase()}_TOKEN`,
		...rights,
	};
}

/** Waits until the thread's latest run has this status (read through t3_thread). */
export async function untilRunStatus(
	client: Client,
	threadId: string,
	status: string,
	what = `run to be ${status}`,
): Promise<void> {
	await until(
		async () => {
			const t = await callTool<{ latest_run: { status: string } | null }>(
				client,
				"t3_thread",
				{ thread_id: threadId },
			);
			return t.data.latest_run?.status === status;
		},
		10_000,
		what,
	);
}

/** Waits until the thread's latest run is `running` (read through t3_thread). */
export function untilRunning(client: Client, threadId: string): Promise<void> {
	return untilRunStatus(client, threadId, "running");
}

/** The official MCP client (2025 era) on a server URL, with extra headers. */
export async function connectClient(
	url: string,
	headers: Record<string, string> = {},
): Promise<Client> {
	const client = new Client({ name: "t3code-mcp-test", version: "1.0.0" });
	await client.connect(
		new StreamableHTTPClientTransport(new URL(url), {
			requestInit: { headers },
		}),
	);
	return client;
}

/** Waits until every machine the server reports is online (read through t3_machines). */
export async function untilMachinesOnline(client: Client): Promise<void> {
	await until(
		async () => {
			const { data } = await callTool<{ machines: { state: string }[] }>(
				client,
				"t3_machines",
			);
			return data.machines.every((m) => m.state === "online");
		},
		10_000,
		"machines online",
	);
}

/** Waits until the named machine is online (read through t3_machines), whatever the others are. */
export async function untilMachineOnline(
	client: Client,
	name: string,
): Promise<void> {
	await until(
		async () => {
			const { data } = await callTool<{
				machines: { name: string; state: string }[];
			}>(client, "t3_machines");
			return data.machines.find((m) => m.name === name)?.state === "online";
		},
		10_000,
		`${name} online`,
	);
}

/** The official MCP client on the stack's server as the caller with this bearer token. */
export function connectAs(stack: Stack, token: string): Promise<Client> {
	return connectClient(stack.server.mcpUrl, {
		authorization: `Bearer ${token}`,
	});
}
