/**
 * `t3code-mcp hook secret` prints a new Standard Webhooks signing secret; `t3code-mcp hook test`
 * sends one signed `webhook.test` event to the configured hook now, outside the outbox (nothing
 * is stored or retried), with the headers and signature every event has
 * (events/webhook-request.ts), and prints the receiver's status and the time it took: exit 0 on
 * 2xx, 1 otherwise. Nothing printed shows the hook URL's path or query, nor a secret.
 */
import type { Env } from "../config/env.ts";
import { type AppConfig, ConfigError, loadConfig } from "../config/index.ts";
import { eventId } from "../events/event.ts";
import { replySnippet, webhookHeaders } from "../events/webhook-request.ts";
import { maskSecrets, redact, urlOrigin } from "../util/redact.ts";
import { requestDeadline } from "../util/request-deadline.ts";
import type { ParsedArgs } from "./args.ts";
import { EXIT } from "./help.ts";
import { HOOK_ARGS } from "./hook-args.ts";
import { reachFailure } from "./hook-probe.ts";

export interface HookDeps {
	env?: Env;
	cwd?: string;
	/** stdout and stderr (tests collect them). */
	out?: (text: string) => void;
	err?: (text: string) => void;
	fetch?: typeof fetch;
	/** Wall clock for the event's time and signature; a monotonic one for the time taken. */
	now?: () => number;
	elapsed?: () => number;
	timeoutMs?: number;
	random?: (bytes: Uint8Array) => Uint8Array;
}

/** `whsec_` + base64 of 32 random bytes, as Standard Webhooks libraries generate them. */
export function newWebhookSecret(
	random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b),
): string {
	return `whsec_${Buffer.from(random(new Uint8Array(32))).toString("base64")}`;
}

export async function runHook(
	args: ParsedArgs,
	deps: HookDeps = {},
): Promise<number> {
	// Safety net: nothing printed shows a configured secret, whatever text it quotes.
	const out = (text: string) =>
		(deps.out ?? ((t) => process.stdout.write(t)))(maskSecrets(text));
	const err = (text: string) =>
		(deps.err ?? ((t) => process.stderr.write(t)))(maskSecrets(text));
	const sub = args.positionals[0];
	if (sub === "secret") {
		// Printed before any config is read: it is how a first secret is made.
		(deps.out ?? ((t) => process.stdout.write(t)))(
			`${newWebhookSecret(deps.random)}\n`,
		);
		return EXIT.ok;
	}
	if (sub !== "test") {
		err(
			`t3code-mcp hook: unknown subcommand "${sub}" (secret or test)\nusage: ${HOOK_ARGS.usage}\n`,
		);
		return EXIT.usage;
	}
	let config: AppConfig;
	try {
		config = await loadConfig({ env: deps.env, cwd: deps.cwd });
	} catch (error) {
		if (!(error instanceof ConfigError)) throw error;
		err(
			error.message
				.split("\n")
				.map((line) => `✗ configuration error: ${line}\n`)
				.join(""),
		);
		return EXIT.config;
	}
	return sendTest(config, deps, out, err);
}

async function sendTest(
	config: AppConfig,
	deps: HookDeps,
	out: (text: string) => void,
	err: (text: string) => void,
): Promise<number> {
	const { hookUrl: url, hookToken: token, hookSecret: secret } = config.server;
	if (url === undefined) {
		err(
			`✗ no webhook configured: set T3CODE_MCP_HOOK_URL${config.file ? ` (or hook_url in [server] of ${config.file})` : ""}\n`,
		);
		return EXIT.failure;
	}
	const now = deps.now ?? Date.now;
	const elapsed = deps.elapsed ?? (() => performance.now());
	const timeoutMs = deps.timeoutMs ?? 10_000;
	const id = eventId();
	const body = JSON.stringify({
		id,
		type: "webhook.test",
		occurred_at: new Date(now()).toISOString(),
	});
	const headers = webhookHeaders(
		{ token, secret },
		{ id, origin: null, body },
		Math.floor(now() / 1000),
	);
	const where = `${urlOrigin(url)} (the path is not shown)`;
	const sent = `${secret ? "signed with T3CODE_MCP_HOOK_SECRET" : "unsigned: T3CODE_MCP_HOOK_SECRET is not set"}; ${token ? "bearer T3CODE_MCP_HOOK_TOKEN" : "no bearer: T3CODE_MCP_HOOK_TOKEN is not set"}`;
	const started = elapsed();
	const took = () => `${Math.round(elapsed() - started)} ms`;
	const deadline = requestDeadline(timeoutMs);
	let response: Response;
	try {
		response = await (deps.fetch ?? fetch)(url, {
			method: "POST",
			headers,
			body,
			redirect: "manual",
			signal: deadline.signal,
		});
	} catch (cause) {
		out(
			`✗ webhook.test ${id} to ${where} not delivered after ${took()}: ${reachFailure(cause, timeoutMs)}\n      fix: start the receiver, or correct T3CODE_MCP_HOOK_URL\n`,
		);
		return EXIT.failure;
	} finally {
		deadline.done();
	}
	const { status } = response;
	const time = took();
	if (status >= 200 && status < 300) {
		await response.body?.cancel().catch(() => {});
		out(
			`✓ webhook.test ${id} to ${where}: HTTP ${status} in ${time} (${sent})\n`,
		);
		return EXIT.ok;
	}
	const said = await replySnippet(response);
	out(
		`✗ webhook.test ${id} to ${where}: HTTP ${status} in ${time} (${sent})${said ? `: ${redact(said, 300)}` : ""}\n      fix: ${refusalFix(status)}\n`,
	);
	return EXIT.failure;
}

/** What to look at for a refusal, by status. */
function refusalFix(status: number): string {
	if (status === 401 || status === 403)
		return "the receiver refused the credentials: check T3CODE_MCP_HOOK_TOKEN and T3CODE_MCP_HOOK_SECRET against what it expects";
	if (status >= 300 && status < 400)
		return "redirects are not followed: set T3CODE_MCP_HOOK_URL to the final URL";
	if (status === 404 || status === 405)
		return "check the path of T3CODE_MCP_HOOK_URL";
	return "the receiver did not accept the event: its log says why";
}
