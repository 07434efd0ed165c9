/**
 * `healthcheck`: GET the local /healthz (distroless images have no curl). The address comes from
 * where `serve` takes it: the environment, then `[server]` in the config file when there is one,
 * then defaults. No config file is needed: a probe beside `demo`, or in an image configured by
 * environment alone, must not fail for want of one.
 */
import type { Env } from "../config/env.ts";
import { EXIT } from "./help.ts";
import { load } from "./run-server.ts";

/** Where a client on this machine reaches a server listening on `host` (any-address → loopback). */
export function healthzUrl(host: string, port: number): string {
	const target = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
	return `http://${target.includes(":") ? `[${target}]` : target}:${port}/healthz`;
}

/** A missing config file reads as an empty one: only `[server]` matters here. */
async function readIfPresent(path: string): Promise<string> {
	try {
		return await Bun.file(path).text();
	} catch (error) {
		if ((error as { code?: unknown }).code === "ENOENT") return "";
		throw error;
	}
}

export async function runHealthcheck(
	env: Env = process.env,
	timeoutMs = 5_000,
): Promise<number> {
	const config = await load(env, { readFile: readIfPresent });
	if (typeof config === "number") return config;
	const { host, port } = config.server;
	if (port === 0) {
		process.stderr.write(
			"healthcheck: the port is 0 (picked by the system at start), so there is nothing to check; set T3CODE_MCP_PORT (or [server] port) to a fixed port\n",
		);
		return EXIT.config;
	}
	const url = healthzUrl(host, port);
	try {
		const response = await fetch(url, {
			signal: AbortSignal.timeout(timeoutMs),
		});
		if (response.status === 200) return EXIT.ok;
		process.stderr.write(`healthcheck: ${url} answered ${response.status}\n`);
	} catch (error) {
		process.stderr.write(
			`healthcheck: ${url} did not answer: ${(error as Error).message}\n`,
		);
	}
	return EXIT.failure;
}
