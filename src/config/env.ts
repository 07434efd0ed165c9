/**
 * The `T3CODE_MCP_*` environment variables (CONTRACT.md "Environment"), read into a partial
 * ServerSettings. An empty or blank variable counts as unset (compose files often write `X=`).
 * Problems name the variable and never echo a secret or the hook URL.
 */
import type { ConfigProblem } from "./config-error.ts";
import { expectedProblem } from "./config-error.ts";
import type { LogLevel, ServerSettings } from "./types.ts";
import {
	hasUserinfo,
	isWebhookSecret,
	parseCommaList,
	parseHostName,
	parseHttpOrigin,
	parseHttpUrl,
	parseIntIn,
} from "./values.ts";

export type Env = Record<string, string | undefined>;

/** Settings taken from the environment; a key is present only when its variable is set. */
export type EnvSettings = Partial<ServerSettings>;

/** The shortest `T3CODE_MCP_TOKEN` accepted. */
export const MIN_TOKEN_LENGTH = 16;

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/** The variable's value (trimmed), or undefined when unset, empty or blank. */
export function envValue(env: Env, name: string): string | undefined {
	// Trimmed: env files often leave a trailing space or CR, which would corrupt a bearer.
	const v = env[name]?.trim();
	return v === undefined || v === "" ? undefined : v;
}

export function readServerEnv(
	env: Env,
	resolvePath: (p: string) => string,
): { settings: EnvSettings; problems: ConfigProblem[] } {
	const settings: EnvSettings = {};
	const problems: ConfigProblem[] = [];
	const bad = (name: string, expected: string, value: string, secret = false) =>
		problems.push(
			expectedProblem(undefined, name, expected, value, { secret }),
		);

	const host = envValue(env, "T3CODE_MCP_HOST");
	if (host !== undefined) {
		const parsed = parseHostName(host, true);
		if (parsed === undefined) {
			bad(
				"T3CODE_MCP_HOST",
				'an address to listen on like "127.0.0.1" or "0.0.0.0"',
				host,
			);
		} else settings.host = parsed;
	}

	const port = envValue(env, "T3CODE_MCP_PORT");
	if (port !== undefined) {
		const n = parseIntIn(port, 0, 65535);
		if (n === undefined) bad("T3CODE_MCP_PORT", "an integer 0-65535", port);
		else settings.port = n;
	}

	const state = envValue(env, "T3CODE_MCP_STATE");
	if (state !== undefined) settings.statePath = resolvePath(state);

	// Empty (what compose's `${T3CODE_MCP_TOKEN:-}` gives) is unset: /mcp is then open.
	const token = envValue(env, "T3CODE_MCP_TOKEN");
	if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
		// Too short to be a secret, or to be masked reliably in output.
		const expected = `a secret of ${MIN_TOKEN_LENGTH} or more characters`;
		problems.push({
			file: undefined,
			key: "T3CODE_MCP_TOKEN",
			expected,
			message: `expected ${expected}, got ${token.length} characters; generate one with \`openssl rand -hex 32\`, or leave it empty to serve /mcp without a bearer`,
		});
	} else if (token !== undefined) settings.token = token;

	const hosts = envValue(env, "T3CODE_MCP_ALLOWED_HOSTS");
	if (hosts !== undefined) {
		settings.allowedHosts = [];
		for (const item of parseCommaList(hosts)) {
			const parsed = parseHostName(item, false);
			if (parsed === undefined) {
				bad(
					"T3CODE_MCP_ALLOWED_HOSTS",
					'comma-separated host names without port, like "t3code-mcp,mcp.example"',
					item,
				);
			} else settings.allowedHosts.push(parsed);
		}
	}

	const origins = envValue(env, "T3CODE_MCP_ALLOWED_ORIGINS");
	if (origins !== undefined) {
		settings.allowedOrigins = [];
		for (const item of parseCommaList(origins)) {
			const parsed = parseHttpOrigin(item);
			if (parsed === undefined) {
				bad(
					"T3CODE_MCP_ALLOWED_ORIGINS",
					'comma-separated http(s) origins like "https://claude.ai"',
					item,
				);
			} else settings.allowedOrigins.push(parsed);
		}
	}

	const hookUrl = envValue(env, "T3CODE_MCP_HOOK_URL");
	if (hookUrl !== undefined) {
		if (hasUserinfo(hookUrl)) {
			bad(
				"T3CODE_MCP_HOOK_URL",
				"a URL without user:password@ (send a credential with T3CODE_MCP_HOOK_TOKEN)",
				hookUrl,
				true,
			);
		} else if (parseHttpUrl(hookUrl) === undefined) {
			bad(
				"T3CODE_MCP_HOOK_URL",
				'an http(s) URL like "https://gateway.example/hooks/t3"',
				hookUrl,
				true,
			);
		} else settings.hookUrl = hookUrl;
	}

	const publicUrl = envValue(env, "T3CODE_MCP_PUBLIC_URL");
	if (publicUrl !== undefined) {
		const parsed = hasUserinfo(publicUrl)
			? undefined
			: parseHttpOrigin(publicUrl);
		if (parsed === undefined)
			bad(
				"T3CODE_MCP_PUBLIC_URL",
				'an http(s) origin without path, query or user:password@, like "https://t3mcp.example.ts.net"',
				publicUrl,
				hasUserinfo(publicUrl),
			);
		else settings.publicUrl = parsed;
	}

	const hookToken = envValue(env, "T3CODE_MCP_HOOK_TOKEN");
	if (hookToken !== undefined) settings.hookToken = hookToken;

	const hookSecret = envValue(env, "T3CODE_MCP_HOOK_SECRET");
	if (hookSecret !== undefined) {
		if (!isWebhookSecret(hookSecret)) {
			bad(
				"T3CODE_MCP_HOOK_SECRET",
				'"whsec_" followed by base64 (a Standard Webhooks secret)',
				hookSecret,
				true,
			);
		} else settings.hookSecret = hookSecret;
	}

	const wait = envValue(env, "T3CODE_MCP_WAIT_TIMEOUT_S");
	if (wait !== undefined) {
		const n = parseIntIn(wait, 1, 3600);
		if (n === undefined)
			bad("T3CODE_MCP_WAIT_TIMEOUT_S", "an integer 1-3600 (seconds)", wait);
		else settings.waitTimeoutS = n;
	}

	const ttl = envValue(env, "T3CODE_MCP_TASK_TTL_S");
	if (ttl !== undefined) {
		const n = parseIntIn(ttl, 1, 604_800);
		if (n === undefined)
			bad(
				"T3CODE_MCP_TASK_TTL_S",
				"an integer 1-604800 (seconds; at most 7 days)",
				ttl,
			);
		else settings.taskTtlS = n;
	}

	const maxHeld = envValue(env, "T3CODE_MCP_MAX_HELD");
	if (maxHeld !== undefined) {
		const n = parseIntIn(maxHeld, 0, 100_000);
		if (n === undefined)
			bad(
				"T3CODE_MCP_MAX_HELD",
				"an integer 0-100000 (held dispatches at once; 0 = never hold)",
				maxHeld,
			);
		else settings.maxHeld = n;
	}

	const ping = envValue(env, "T3CODE_MCP_PING_TIMEOUT_S");
	if (ping !== undefined) {
		const n = parseIntIn(ping, 1, 300);
		if (n === undefined)
			bad("T3CODE_MCP_PING_TIMEOUT_S", "an integer 1-300 (seconds)", ping);
		else settings.pingTimeoutS = n;
	}

	const level = envValue(env, "T3CODE_MCP_LOG_LEVEL");
	if (level !== undefined) {
		const lower = level.trim().toLowerCase() as LogLevel;
		if (!LEVELS.includes(lower))
			bad(
				"T3CODE_MCP_LOG_LEVEL",
				'one of "debug", "info", "warn", "error"',
				level,
			);
		else settings.logLevel = lower;
	}

	return { settings, problems };
}

/**
 * The default state path: `$STATE_DIRECTORY/t3code-mcp.sqlite` under systemd (which may pass
 * several colon-separated directories; the first is ours), else `./data/t3code-mcp.sqlite`.
 */
export function defaultStatePath(
	env: Env,
	resolvePath: (p: string) => string,
): string {
	const dirs = envValue(env, "STATE_DIRECTORY");
	const first = dirs?.split(":").find((d) => d.trim() !== "");
	return resolvePath(
		first === undefined
			? "data/t3code-mcp.sqlite"
			: `${first.replace(/\/+$/, "")}/t3code-mcp.sqlite`,
	);
}
