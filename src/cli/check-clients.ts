/**
 * `check`'s lines for `[clients.*]` (CONTRACT.md "Clients and rights", "Trust round three"):
 * each client's level, approver right, reach (the machines its patterns match now, its project
 * patterns and the projects they match on the machines online now) and whether its token is
 * set. A ⚠ for a client without a token, for one whose `machines` or `projects` reach nothing on
 * the machines online now, and for a token file group or others may read.
 */
import { compileProjectMatcher } from "../config/fnmatch.ts";
import { readTokenFile } from "../config/token-file.ts";
import type { AppConfig, ClientConfig } from "../config/types.ts";
import { machineInReach } from "../rights/scoped-fleet.ts";
import type { ProjectShell } from "../t3/model.ts";
import type { CheckResult } from "./check-machine.ts";

/**
 * The machines online now (their shell could be read), each with the projects its own
 * `projects` allow. Undefined when not probed: reach is then judged by machine names alone.
 */
export type OnlineMachines = Map<string, ProjectShell[]>;

/** At most this many project titles are named in a client's line. */
const SHOWN_PROJECTS = 10;

export async function clientChecks(
	config: AppConfig,
	online?: OnlineMachines,
): Promise<CheckResult[]> {
	const lines = await Promise.all(
		config.clients.map(async (client) => [
			clientCheck(config, client, online),
			...(await tokenFileCheck(client)),
		]),
	);
	return lines.flat();
}

/** A ⚠ beside the client's line when its token file is readable by group or others. */
async function tokenFileCheck(client: ClientConfig): Promise<CheckResult[]> {
	if (client.tokenFile === null || client.token === undefined) return [];
	const read = await readTokenFile(client.tokenFile);
	if (read.warning === undefined) return [];
	return [
		{
			name: `client ${client.name} token file permissions`,
			ok: true,
			warning: true,
			detail: read.warning,
			fix: `\`chmod 600 ${client.tokenFile}\`: only the user t3code-mcp runs as needs to read it`,
		},
	];
}

interface Reach {
	/** Configured machines its `machines` match. */
	machines: string[];
	/** Of those, the ones online now; undefined when not probed. */
	online: string[] | undefined;
	/** Projects it reaches on them, as `machine "title"`. */
	projects: string[];
}

function reachOf(
	config: AppConfig,
	client: ClientConfig,
	online: OnlineMachines | undefined,
): Reach {
	const machines = config.machines
		.map((m) => m.name)
		.filter((name) => machineInReach(client, name));
	if (online === undefined)
		return { machines, online: undefined, projects: [] };
	const up = machines.filter((name) => online.has(name));
	let allows: (p: ProjectShell) => boolean;
	try {
		allows = compileProjectMatcher(client.projects);
	} catch {
		allows = () => false;
	}
	const projects = up.flatMap((name) =>
		(online.get(name) ?? [])
			.filter((p) => allows(p))
			.map((p) => `${name} ${JSON.stringify(p.title)}`),
	);
	return { machines, online: up, projects };
}

function projectsShown(client: ClientConfig, reach: Reach): string {
	const patterns = `projects ${client.projects.join(", ")}`;
	if (reach.online === undefined) return patterns;
	if (reach.online.length === 0)
		return `${patterns} (none of its machines is online now)`;
	if (reach.projects.length === 0) return `${patterns} (matching nothing now)`;
	const shown = reach.projects.slice(0, SHOWN_PROJECTS).join(", ");
	const more = reach.projects.length - SHOWN_PROJECTS;
	return `${patterns} (matching now: ${shown}${more > 0 ? `, and ${more} more` : ""})`;
}

function clientCheck(
	config: AppConfig,
	client: ClientConfig,
	online: OnlineMachines | undefined,
): CheckResult {
	const reach = reachOf(config, client, online);
	const { machines } = reach;
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
		projectsShown(client, reach),
		client.maxActiveRuns === null
			? "no run cap"
			: `max_active_runs ${client.maxActiveRuns}`,
		client.token === undefined
			? `no token (${source} is empty)`
			: `token from ${source}`,
	].join("; ");
	const name = `client ${client.name}`;
	const warn = (fix: string): CheckResult => ({
		name,
		ok: true,
		warning: true,
		detail,
		fix,
	});
	if (client.token === undefined)
		return warn(
			`set ${source}: until then no bearer authenticates as ${client.name}`,
		);
	if (machines.length === 0)
		return warn(
			`its machines patterns (${client.machines.join(", ")}) match no configured machine: this client sees nothing`,
		);
	if (reach.online !== undefined && reach.online.length === 0)
		return warn(
			`none of its machines (${machines.join(", ")}) is online now: this client sees nothing until one is`,
		);
	if (reach.online !== undefined && reach.projects.length === 0)
		return warn(
			`its projects patterns (${client.projects.join(", ")}) match no project its machines online now (${reach.online.join(", ")}) allow: this client sees nothing; patterns match a project's title or workspace root`,
		);
	return { name, ok: true, detail };
}
