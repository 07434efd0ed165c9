/**
 * `check`'s lines for `[clients.*]` (CONTRACT.md "Clients and rights"): each client's level,
 * approver right, reach (the machines its patterns match now, and its project patterns) and
 * whether its token is set. A client that reaches no machine, or has no token, is a ⚠.
 */
import type { AppConfig, ClientConfig } from "../config/types.ts";
import { machineInReach } from "../rights/scoped-fleet.ts";
import type { CheckResult } from "./check-machine.ts";

export function clientChecks(config: AppConfig): CheckResult[] {
	return config.clients.map((client) => clientCheck(config, client));
}

function clientCheck(config: AppConfig, client: ClientConfig): CheckResult {
	const machines = config.machines
		.map((m) => m.name)
		.filter((name) => machineInReach(client, name));
	const source =
		client.tokenFile !== null
			? `token_file ${client.tokenFile}`
			: client.tokenEnv !== null
				? client.tokenEnv
				: "T3CODE_MCP_TOKEN";
	const detail = [
		`access ${client.access}`,
		client.approve ? "approves" : "does not approve",
		`machines ${machines.length > 0 ? machines.join(", ") : "none"}`,
		`projects ${client.projects.join(", ")}`,
		client.maxActiveRuns === null
			? "no run cap"
			: `max_active_runs ${client.maxActiveRuns}`,
		client.token === undefined
			? `no token (${source} is empty)`
			: `token from ${source}`,
	].join("; ");
	const name = `client ${client.name}`;
	if (client.token === undefined)
		return {
			name,
			ok: true,
			warning: true,
			detail,
			fix: `set ${source}: until then no bearer authenticates as ${client.name}`,
		};
	if (machines.length === 0)
		return {
			name,
			ok: true,
			warning: true,
			detail,
			fix: `its machines patterns (${client.machines.join(", ")}) match no configured machine: this client sees nothing`,
		};
	return { name, ok: true, detail };
}
