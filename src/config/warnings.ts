/**
 * Findings in a valid configuration that are worth a log line at startup but do not stop the
 * server: no machines, a machine whose token variable is unset, no inbound token on a
 * non-loopback address. `src/index.ts` logs them once the logger exists.
 */
import type { AppConfig } from "./types.ts";

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1)$/i;

/** @example for (const w of configWarnings(config)) log.warn(w); */
export function configWarnings(config: AppConfig): string[] {
	const out: string[] = [];
	if (config.machines.length === 0) {
		out.push(
			`${config.file}: no [machines.<name>] tables; t3_machines will list none`,
		);
	}
	for (const m of config.machines) {
		if (m.token === undefined) {
			out.push(
				`machine "${m.name}": environment variable ${m.tokenEnv} (its token_env) is unset or empty; it will be reported unauthorized`,
			);
		}
	}
	if (config.server.token === undefined && !LOOPBACK.test(config.server.host)) {
		out.push(
			`listening on ${config.server.host} without T3CODE_MCP_TOKEN: /mcp and /metrics need no bearer token`,
		);
	}
	return out;
}
