/** The validated configuration every other module receives (CONTRACT.md "Config", "Environment"). */

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface MachineConfig {
	/** The `[machines.<name>]` key. */
	name: string;
	/** http(s) origin, no trailing slash. */
	url: string;
	/** The `token_env` variable's name; null when the machine has a `token_file`. */
	tokenEnv: string | null;
	/** The `token_file`, resolved (absolute); null when the machine has a `token_env`. */
	tokenFile: string | null;
	/**
	 * The token at load: from `tokenEnv` (or its systemd credential), or the token file's
	 * content then; undefined when there is none. A token file is read again at every connect
	 * (token-file.ts `machineToken`).
	 */
	token: string | undefined;
	/** fnmatch patterns against project title and workspace root. */
	projects: string[];
	/** `model = "<providerInstance>/<model>"` split on the first "/"; null when absent. */
	model: { instanceId: string; model: string } | null;
	/** `options` table as the model selection's `[{id, value}]` list. */
	options: { id: string; value: string | boolean }[];
}

export interface ServerSettings {
	host: string;
	port: number;
	statePath: string;
	/** Inbound bearer for /mcp and /metrics; undefined = no auth. */
	token: string | undefined;
	allowedHosts: string[];
	allowedOrigins: string[];
	hookUrl: string | undefined;
	hookToken: string | undefined;
	hookSecret: string | undefined;
	waitTimeoutS: number;
	/** How long an MCP task lives after creation (T3CODE_MCP_TASK_TTL_S). */
	taskTtlS: number;
	/** Silence on a machine's socket after which it is offline; pings go every third of it. */
	pingTimeoutS: number;
	logLevel: LogLevel;
}

export interface AppConfig {
	/** Path of the config file that was read (absolute). */
	file: string;
	server: ServerSettings;
	machines: MachineConfig[];
}
