/** `healthcheck`: GET the local /healthz (distroless images have no curl). */
import type { Env } from "../config/env.ts";
import { EXIT } from "./help.ts";

export async function runHealthcheck(env: Env = process.env): Promise<number> {
	const port = env.T3CODE_MCP_PORT?.trim() || "8000";
	const host = env.T3CODE_MCP_HOST?.trim() || "127.0.0.1";
	const target = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
	const url = `http://${target.includes(":") ? `[${target}]` : target}:${port}/healthz`;
	try {
		const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
		if (response.status === 200) return EXIT.ok;
		process.stderr.write(`healthcheck: ${url} answered ${response.status}\n`);
	} catch (error) {
		process.stderr.write(
			`healthcheck: ${url} did not answer: ${(error as Error).message}\n`,
		);
	}
	return EXIT.failure;
}
