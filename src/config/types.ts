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
	/**
	 * `max_active_runs`: busy threads on this machine at once, whoever started them (CONTRACT.md
	 * "One pool"); null or absent: unlimited.
	 */
	maxActiveRuns?: number | null;
}

/** T3 Code's own outside-agent access levels, lowest first (CONTRACT.md "Clients and rights"). */
export const ACCESS_LEVELS = [
	"read-only",
	"approval-required",
	"auto-accept-edits",
	"auto",
	"full-access",
] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/** One caller of `/mcp`: its bearer, its reach and its rights (`[clients.<name>]`). */
export interface ClientConfig {
	/** The `[clients.<name>]` key; `default` for `T3CODE_MCP_TOKEN`. */
	name: string;
	/** The `token_env` variable's name; null with a `token_file` (or for `default`). */
	tokenEnv: string | null;
	/** The `token_file`, resolved (absolute); null otherwise. */
	tokenFile: string | null;
	/** The bearer it authenticates with; undefined when its variable or file holds none. */
	token: string | undefined;
	access: AccessLevel;
	/** fnmatch patterns on machine names. */
	machines: string[];
	/** fnmatch patterns on project title and path, within each machine's own `projects`. */
	projects: string[];
	/** May answer approvals (`t3_answer` `decision`). */
	approve: boolean;
	/** Runs of its threads going or queued at once; null = unlimited. */
	maxActiveRuns: number | null;
	/** Its dispatches held at once (`max_held`, CONTRACT.md "One pool"); unset = 100. */
	maxHeld?: number;
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
	/** How long audit rows are kept (`[server] audit_days`). */
	auditDays: number;
	/** Held dispatches at once, all clients (`[server] max_held`, T3CODE_MCP_MAX_HELD); unset = 1000. */
	maxHeld?: number;
	/** How long a console session lasts (`[server] console_session_hours`; default 12). */
	consoleSessionHours?: number;
	/**
	 * How people reach this server (`[server] public_url`, `T3CODE_MCP_PUBLIC_URL`): an http(s)
	 * origin, no path. Its origin is an accepted `Origin`, its host an accepted `Host`; approval
	 * links are made under it. Undefined when not set.
	 */
	publicUrl?: string | undefined;
}

/** `[approvals]`: approval links for people (CONTRACT.md "Approval links"). */
export interface ApprovalsConfig {
	/** The client (with `approve`) a link decides as. */
	linkClient: string;
	/** Where `approval.requested` and `approval.settled` go: the people hook. */
	hookUrl: string;
	/** The variable holding the people hook's bearer; null when none. */
	hookTokenEnv: string | null;
	/** Its value at load; undefined when unset. */
	hookToken: string | undefined;
	/** How long a link stays usable (seconds; default 3600). */
	linkTtlS: number;
	/** Decisions a link page offers (snake_case, those T3 offers too); default accept, decline. */
	decisions: string[];
}

export interface AppConfig {
	/** Path of the config file that was read (absolute). */
	file: string;
	server: ServerSettings;
	machines: MachineConfig[];
	/**
	 * Who may call `/mcp`: the `[clients.*]` tables, plus `default` for `T3CODE_MCP_TOKEN`.
	 * Empty: no bearer is asked and every caller has every right (as before clients existed).
	 */
	clients: ClientConfig[];
	/** `[approvals]`, or absent/null when approval links are off. */
	approvals?: ApprovalsConfig | null;
}
