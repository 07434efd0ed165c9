/**
 * What other modules may use from `src/config/`: loading, the error, warnings, the project
 * matcher and the types. Internals (schema, env parsing) stay private to the folder.
 */
export type { ConfigProblem } from "./config-error.ts";
export { ConfigError } from "./config-error.ts";
export type { MatchableProject } from "./fnmatch.ts";
export { compileProjectMatcher, PatternError } from "./fnmatch.ts";
export type { LoadConfigOptions } from "./load-config.ts";
export { DEFAULT_CONFIG_FILE, loadConfig } from "./load-config.ts";
export type {
	AppConfig,
	LogLevel,
	MachineConfig,
	ServerSettings,
} from "./types.ts";
export type { OpenMcpWarning } from "./warnings.ts";
export { configWarnings, openMcpWarning } from "./warnings.ts";
