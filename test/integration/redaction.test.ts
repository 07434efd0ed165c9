/**
 * Outside text is shown only after redaction (CONTRACT.md "HTTP"): a T3 server or proxy that
 * echoes the Authorization header in an error body, a T3 refusal quoting a token, a run error
 * with a credential in it, and a webhook receiver that replies with secrets. None of the
 * configured secrets reaches t3_machines, tool errors, /healthz, `check` (text and --json) or
 * the log; the texts still say what went wrong.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCheck } from "../../src/cli/check.ts";
import { fullRights } from "../../src/config/clients.ts";
import { createLogger } from "../../src/util/log.ts";
import { MASK } from "../../src/util/redact.ts";
import {
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilMachineOnline,
} from "../helpers/stack.ts";
import {
	exits,
	type HostileT3,
	startHostileT3,
	THREAD_ID,
	threadDetail,
	threadShell,
} from "../sweep/hostile-t3.ts";

const ECHO_TOKEN = "echo-machine-token-0123456789";
const REFUSER_TOKEN = "refuser-machine-token-9876543210";
const INBOUND_TOKEN = "inbound-mcp-token-24680";
const HOOK_TOKEN = "hook-bearer-token-13579";
/** Not configured anywhere: masked because it is a credential value. */
const STRANGER_BEARER = "stranger-bearer-abcdefgh";

const CONFIGURED = [
	ECHO_TOKEN,
	REFUSER_TOKEN,
	INBOUND_TOKEN,
	HOOK_TOKEN,
	TEST_SECRET,
	TEST_SECRET.slice("whsec_".length),
];
const ALL_SECRETS = [...CONFIGURED, STRANGER_BEARER];

function expectNoSecret(text: string): void {
	for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
}

/** A proxy in front of T3 that answers 502 and quotes the request's headers, as some do. */
function echoingProxy(request: Request): Response {
	return new Response(
		`502 Bad Gateway: upstream refused request with authorization: ${request.headers.get("authorization")}; proxy-authorization: Bearer ${STRANGER_BEARER}`,
		{ status: 502 },
	);
}

let echo: HostileT3;
let refuser: HostileT3;
let receiver: Receiver;
let stack: Stack;
const logs: string[] = [];

beforeAll(async () => {
	echo = startHostileT3({
		http: (route, request) =>
			route === "session" ? echoingProxy(request) : undefined,
	});
	refuser = startHostileT3({
		http: (route) =>
			route === "thread"
				? Response.json(
						threadDetail({
							// A failed run: only a run that ended without completing shows an error.
							runs: [
								{
									id: "r-1",
									ordinal: 1,
									userMessageId: "m-1",
									status: "failed",
									completedAt: "2026-11-29T12:00:01.000Z",
								},
							],
							thread: threadShell({
								status: "failed",
								lastError: `provider said: invalid x-api-key: sk-live-${STRANGER_BEARER} (sent with token ${REFUSER_TOKEN})`,
							}),
						}),
					)
				: undefined,
		onRequest(tag, id, _payload, ws) {
			if (tag !== "orchestration.launchThread") return false;
			ws.exit(
				id,
				exits.fail({
					_tag: "OrchestrationV2DispatchCommandError",
					message: `refused: the request carried Authorization: Bearer ${REFUSER_TOKEN}`,
				}),
			);
			return true;
		},
	});
	receiver = startReceiver();
	stack = await startStack({
		machines: [
			{ name: "echo", url: echo.url, token: ECHO_TOKEN },
			{ name: "refuser", url: refuser.url, token: REFUSER_TOKEN },
			{ name: "demo" },
		],
		server: {
			token: INBOUND_TOKEN,
			hookUrl: receiver.url,
			hookToken: HOOK_TOKEN,
			hookSecret: TEST_SECRET,
			logLevel: "debug",
		},
		log: createLogger("debug", (line) => logs.push(line)),
	});
});
afterAll(async () => {
	await stack.stop();
	await Promise.all([echo.stop(), refuser.stop(), receiver.stop()]);
});

async function health(): Promise<{
	machines: Record<string, { state: string; reason?: string }>;
	outbox: { last_error?: string };
}> {
	const response = await fetch(`${stack.server.url}/healthz`, {
		headers: { authorization: `Bearer ${INBOUND_TOKEN}` },
	});
	return (await response.json()) as never;
}

describe("a T3 server or proxy echoing the Authorization header", () => {
	test("t3_machines, /healthz and the log show the reason without the token", async () => {
		const client = await stack.client();
		let reason = "";
		await until(
			async () => {
				const m = await callTool<{
					machines: { name: string; state: string; reason: string | null }[];
				}>(client, "t3_machines");
				expectNoSecret(m.text);
				reason = m.data.machines.find((x) => x.name === "echo")?.reason ?? "";
				return reason.includes("502");
			},
			10_000,
			"the echo machine to report the 502",
		);
		expect(reason).toContain("Bad Gateway");
		expect(reason).toContain(`authorization: ${MASK}`);
		expect(reason.length).toBeLessThanOrEqual(500);

		const report = await health();
		expect(report.machines.echo?.reason).toContain("502");
		expectNoSecret(JSON.stringify(report));
		expect(logs.some((l) => l.includes("Bad Gateway"))).toBe(true);
		expectNoSecret(logs.join("\n"));
	});

	test("a T3 refusal and a run error quoting a token are masked in tool results", async () => {
		const client = await stack.client();
		await untilMachineOnline(client, "refuser");
		const refused = await callTool(client, "t3_dispatch", {
			machine: "refuser",
			project: "demo",
			prompt: "hello",
		});
		expect(refused.isError).toBe(true);
		expect(refused.text).toContain("refused");
		expect(refused.text).toContain(MASK);
		expectNoSecret(refused.text);

		const thread = await callTool<{
			latest_run: { error: string | null } | null;
		}>(client, "t3_thread", { thread_id: THREAD_ID });
		expect(thread.text).toContain("provider said");
		expectNoSecret(thread.text);
		expectNoSecret(logs.join("\n"));
	});

	test("check, as text and --json, shows the cause without the token, and the hook by origin", async () => {
		const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-redact-"));
		try {
			writeFileSync(
				join(dir, "t3code.toml"),
				[
					"[machines.echo]",
					`url = "${echo.url}"`,
					'token_env = "T3_ECHO_TOKEN"',
					'projects = ["*"]',
				].join("\n"),
			);
			const env = {
				T3CODE_MCP_CONFIG: join(dir, "t3code.toml"),
				T3CODE_MCP_STATE: join(dir, "state.sqlite"),
				T3_ECHO_TOKEN: ECHO_TOKEN,
				T3CODE_MCP_HOOK_URL: "https://hooks.example/in/path-secret-97531",
			};
			for (const argv of [[], ["--json"]]) {
				let out = "";
				const code = await runCheck(argv, {
					env,
					cwd: dir,
					// The hook's host is not on loopback: its probe is stubbed, not attempted.
					probeHook: async () => ({
						ok: false,
						reason: "no route to the host",
					}),
					write: (t) => {
						out += t;
					},
				});
				expect(code).toBe(1);
				expect(out).toContain("Bad Gateway");
				expect(out).toContain("events are POSTed to https://hooks.example");
				expect(out).toContain("cannot be reached now: no route to the host");
				expect(out).not.toContain("path-secret-97531");
				expectNoSecret(out);
			}
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe("a webhook receiver replying with secrets", () => {
	test("/healthz last_error and the log keep its words, not its secrets", async () => {
		receiver.setMode({
			status: 400,
			body: `signature mismatch: got Authorization: Bearer ${HOOK_TOKEN}, webhook secret ${TEST_SECRET}, try Bearer ${STRANGER_BEARER}`,
		});
		const client = await stack.client();
		await untilMachineOnline(client, "demo");
		const dispatched = await callTool(client, "t3_dispatch", {
			machine: "demo",
			project: "demo",
			prompt: "hello",
		});
		expect(dispatched.isError).toBe(false);
		let lastError = "";
		await until(
			async () => {
				lastError = (await health()).outbox.last_error ?? "";
				return lastError !== "";
			},
			10_000,
			"a failed delivery",
		);
		expect(lastError).toContain("HTTP 400");
		expect(lastError).toContain("signature mismatch");
		expectNoSecret(lastError);
		expect(logs.some((l) => l.includes("signature mismatch"))).toBe(true);
		expectNoSecret(logs.join("\n"));
		expect(logs.join("\n")).not.toContain(stack.sim("demo").token);
	});
});

describe("a client whose token starts with its name", () => {
	test("the debug log shows the name and masks the token", async () => {
		const token = "agent-token-0123456789";
		const lines: string[] = [];
		const stack = await startStack({
			clients: [
				{
					...fullRights("agent", token),
					tokenEnv: "AGENT_TOKEN",
					access: "read-only",
				},
			],
			log: createLogger("debug", (line) => lines.push(line)),
		});
		try {
			const client = await stack.client({
				headers: { Authorization: `Bearer ${token}` },
			});
			const listed = await callTool(client, "t3_machines");
			expect(listed.isError).toBe(false);
			const call = lines
				.map((l) => JSON.parse(l) as Record<string, unknown>)
				.find((l) => l.msg === "tool call" && l.tool === "t3_machines");
			expect(call?.client).toBe("agent");
			expect(lines.join("\n")).not.toContain(token);
			expect(lines.join("\n")).not.toContain("token-0123");
		} finally {
			await stack.stop();
		}
	});
});
