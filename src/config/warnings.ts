/**
 * Findings in a valid configuration that are worth a log line at startup but do not stop the
 * server: no machines, a machine whose token variable is unset, and (HTTP only) `/mcp` served
 * without a bearer on a non-loopback address. The commands log them once the server listens.
 */
import type { AppConfig, ServerSettings } from "./types.ts";

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1)$/i;

/** What is left open, and how to close it. */
export interface OpenMcpWarning {
	detail: string;
	fix: string;
}

/** @example for (const w of configWarnings(config)) log.warn(w); */
export function configWarnings(config: AppConfig): string[] {
	const out: string[] = [];
	if (config.machines.length === 0) {
		out.push(
			`${config.file}: no [machines.<name>] tables; t3_machines will list none`,
		);
	}
	for (const m of config.machines) {
		if (m.token === undefined && m.tokenEnv !== null) {
			out.push(
				`machine "${m.name}": environment variable ${m.tokenEnv} (its token_env) is unset or empty; it will be reported unauthorized`,
			);
		} else if (m.token === undefined) {
			out.push(
				`machine "${m.name}": its token file ${m.tokenFile} (token_file) cannot be read now; it will be reported unauthorized until it can`,
			);
		}
	}
	return out;
}

/**
 * `/mcp` and `/metrics` served without a bearer on an address others can reach (a container's
 * 0.0.0.0 behind a gateway does this on purpose, so it warns and never fails).
 */
export function openMcpWarning(config: {
	server: Pick<ServerSettings, "host" | "token">;
	clients?: unknown[];
}): OpenMcpWarning | undefined {
	const { server } = config;
	if (
		server.token !== undefined ||
		(config.clients?.length ?? 0) > 0 ||
		LOOPBACK.test(server.host)
	)
		return undefined;
	return {
		detail: `listening on ${server.host} without T3CODE_MCP_TOKEN: /mcp and /metrics need no bearer token`,
		fix: "set T3CODE_MCP_TOKEN to a secret of 16 or more characters (e.g. `openssl rand -hex 32`) and send it as the bearer, or listen on 127.0.0.1; leave it so only when a gateway in front of this port is the only way in",
	};
}
