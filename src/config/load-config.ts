/**
 * Reads `t3code.toml` and the environment into the AppConfig every other module receives.
 * Precedence per server setting: env variable, then `[server]` in the file, then the default.
 * All problems (file and env) are gathered into one ConfigError. No logging here: see
 * `configWarnings` for the non-fatal findings.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { registerConfigSecrets } from "../util/redact.ts";
import { readApprovals } from "./approvals.ts";
import { readClients } from "./clients.ts";
import { ConfigError, type ConfigProblem } from "./config-error.ts";
import { credentialToken } from "./credentials.ts";
import { defaultStatePath, type Env, envValue, readServerEnv } from "./env.ts";
import { type FileConfig, validateFile } from "./file-schema.ts";
import { readTokenFile, resolveTokenFile } from "./token-file.ts";
import { tomlSyntaxMessage } from "./toml-error.ts";
import type { AppConfig, MachineConfig, ServerSettings } from "./types.ts";

export interface LoadConfigOptions {
	env?: Env;
	cwd?: string;
	/** Reads a file as text; rejects with `code: "ENOENT"` when it does not exist. */
	readFile?: (path: string) => Promise<string>;
	/** Instead of ./t3code.toml when T3CODE_MCP_CONFIG is unset (`stdio`: the XDG path). */
	defaultConfigFile?: string;
	/** Instead of the usual default when neither T3CODE_MCP_STATE nor `[server] state` is set. */
	defaultStatePath?: string;
}

export const DEFAULT_CONFIG_FILE = "t3code.toml";

const DEFAULTS = {
	host: "127.0.0.1",
	port: 8000,
	waitTimeoutS: 600,
	taskTtlS: 86_400,
	pingTimeoutS: 10,
	logLevel: "info",
	auditDays: 90,
	consoleSessionHours: 12,
} as const;

/** `:memory:` is sqlite's in-memory database, not a path. */
const resolveState = (base: string, p: string) =>
	p === ":memory:" || isAbsolute(p) ? p : resolve(base, p);

/**
 * @example
 * const config = await loadConfig(); // T3CODE_MCP_CONFIG or ./t3code.toml
 * @throws ConfigError listing every problem, one per line.
 */
export async function loadConfig(
	options: LoadConfigOptions = {},
): Promise<AppConfig> {
	const env = options.env ?? process.env;
	const cwd = options.cwd ?? process.cwd();
	const readFile =
		options.readFile ?? ((path: string) => Bun.file(path).text());

	const named = envValue(env, "T3CODE_MCP_CONFIG");
	const shown = named ?? options.defaultConfigFile ?? DEFAULT_CONFIG_FILE;
	const file = resolve(cwd, shown);
	const problems: ConfigProblem[] = [];

	const doc = await readToml(
		file,
		shown,
		named !== undefined ? "env" : options.defaultConfigFile,
		readFile,
		problems,
	);
	let fileConfig: FileConfig = {};
	if (doc !== undefined) {
		const checked = validateFile(doc, shown);
		if (checked.ok) fileConfig = checked.value;
		else problems.push(...checked.problems);
	}

	const fromEnv = readServerEnv(env, (p) => resolveState(cwd, p));
	problems.push(...fromEnv.problems);
	if (problems.length > 0) throw new ConfigError(problems, file);

	const fs = fileConfig.server ?? {};
	const es = fromEnv.settings;
	const server: ServerSettings = {
		host: es.host ?? fs.host ?? DEFAULTS.host,
		port: es.port ?? fs.port ?? DEFAULTS.port,
		// A relative `state` in the file is relative to the file, so it does not move with the cwd.
		statePath:
			es.statePath ??
			(fs.state !== undefined
				? resolveState(dirname(file), fs.state)
				: (options.defaultStatePath ??
					defaultStatePath(env, (p) => resolveState(cwd, p)))),
		token: es.token,
		allowedHosts: es.allowedHosts ?? fs.allowed_hosts ?? [],
		allowedOrigins: es.allowedOrigins ?? fs.allowed_origins ?? [],
		hookUrl: es.hookUrl ?? fs.hook_url,
		hookToken: es.hookToken,
		hookSecret: es.hookSecret,
		waitTimeoutS: es.waitTimeoutS ?? fs.wait_timeout_s ?? DEFAULTS.waitTimeoutS,
		taskTtlS: es.taskTtlS ?? DEFAULTS.taskTtlS,
		pingTimeoutS: es.pingTimeoutS ?? fs.ping_timeout_s ?? DEFAULTS.pingTimeoutS,
		logLevel: es.logLevel ?? fs.log_level ?? DEFAULTS.logLevel,
		auditDays: fs.audit_days ?? DEFAULTS.auditDays,
		...((es.maxHeld ?? fs.max_held) === undefined
			? {}
			: { maxHeld: es.maxHeld ?? fs.max_held }),
		consoleSessionHours:
			fs.console_session_hours ?? DEFAULTS.consoleSessionHours,
		publicUrl: es.publicUrl ?? fs.public_url,
	};

	// Token files are read together and asynchronously: one that is slow or special (a FIFO)
	// holds up neither the others nor the load (token-file.ts).
	const machines: MachineConfig[] = await Promise.all(
		Object.entries(fileConfig.machines ?? {}).map(async ([name, m]) => {
			// The schema lets exactly one of the two through.
			const tokenFile =
				m.token_file === undefined
					? null
					: resolveTokenFile(m.token_file, dirname(file), env);
			const tokenEnv = m.token_env ?? null;
			return {
				name,
				url: m.url,
				tokenEnv,
				tokenFile,
				// Unset or unreadable is not a config error: the machine is reported `unauthorized` at
				// runtime. systemd's LoadCredential= is the fallback when the variable is unset.
				token:
					tokenFile !== null
						? (await readTokenFile(tokenFile)).token
						: tokenEnv === null
							? undefined
							: (envValue(env, tokenEnv) ?? credentialToken(env, tokenEnv)),
				projects: m.projects,
				model: m.model ?? null,
				options: Object.entries(m.options ?? {}).map(([id, value]) => ({
					id,
					value,
				})),
				...(m.max_active_runs === undefined
					? {}
					: { maxActiveRuns: m.max_active_runs }),
			};
		}),
	);

	const fromClients = await readClients(
		fileConfig.clients ?? {},
		server.token,
		file,
		shown,
		env,
		machines,
	);
	if (fromClients.problems.length > 0)
		throw new ConfigError(fromClients.problems, file);

	const approvals = readApprovals(
		fileConfig.approvals,
		server,
		fromClients.clients,
		shown,
		env,
	);
	if (approvals.problems.length > 0)
		throw new ConfigError(approvals.problems, file);

	const config = {
		file,
		server,
		machines,
		clients: fromClients.clients,
		approvals: approvals.value,
	};
	// Every command reads its config here: from now on its secrets are masked in any output.
	registerConfigSecrets(config);
	return config;
}

/** The parsed document, or undefined after recording why it could not be had. */
async function readToml(
	file: string,
	shown: string,
	/** "env" when T3CODE_MCP_CONFIG named it, else a default other than ./t3code.toml, if any. */
	named: "env" | string | undefined,
	readFile: (path: string) => Promise<string>,
	problems: ConfigProblem[],
): Promise<unknown> {
	let text: string;
	try {
		text = await readFile(file);
	} catch (err) {
		const code = (err as { code?: unknown }).code;
		const expected = "a readable config file";
		if (code === "ENOENT" && named === "env") {
			const message = `config file ${file} not found (named by T3CODE_MCP_CONFIG); point T3CODE_MCP_CONFIG at an existing file, or create it from t3code.example.toml`;
			problems.push({ file: undefined, key: "", expected, message });
		} else if (code === "ENOENT" && named !== undefined) {
			const message = `config file ${file} not found (create it from t3code.example.toml, or set T3CODE_MCP_CONFIG)`;
			problems.push({ file: undefined, key: "", expected, message });
		} else if (code === "ENOENT") {
			const message = `config file ./${DEFAULT_CONFIG_FILE} not found (set T3CODE_MCP_CONFIG or create it from t3code.example.toml)`;
			problems.push({ file: undefined, key: "", expected, message });
		} else {
			const message = `cannot read the config file: ${(err as Error).message}; make it a file this user can read, or point T3CODE_MCP_CONFIG at one`;
			problems.push({ file: shown, key: "", expected, message });
		}
		return undefined;
	}
	try {
		return Bun.TOML.parse(text);
	} catch (err) {
		problems.push({
			file: shown,
			key: "",
			expected: "valid TOML",
			message: tomlSyntaxMessage(text, err),
		});
		return undefined;
	}
}
