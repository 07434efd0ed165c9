/**
 * The probes behind `t3code-mcp check`: one machine, one list of checks, each ✓ or ✗ with the
 * fix. Talks to T3 only through `src/t3/connect/http.ts` (no socket, no subscription), so it runs the
 * same against a real server, the simulator or nothing at all. Never renders a token.
 */
import { compileProjectMatcher } from "../config/index.ts";
import { machineToken } from "../config/token-file.ts";
import type { MachineConfig } from "../config/types.ts";
import { createT3Http, type FetchLike } from "../t3/connect/http.ts";
import { tooOldFor } from "../t3/connect/negotiate.ts";
import { sessionExpiry } from "../t3/connect/token-expiry.ts";
import type { ProjectShell } from "../t3/model.ts";
import { redact } from "../util/redact.ts";

export interface CheckResult {
	name: string;
	ok: boolean;
	detail: string;
	fix?: string;
	/** Passes, but worth a ⚠ (it does not fail `check`). */
	warning?: boolean;
}

export interface MachineReport {
	name: string;
	url: string;
	checks: CheckResult[];
}

export const READ_SCOPE = "orchestration:read";
export const OPERATE_SCOPE = "orchestration:operate";

/** The one command that issues a token with exactly the two scopes t3code-mcp uses. */
export const TOKEN_COMMAND =
	"t3 auth session issue --scope orchestration:read --scope orchestration:operate --token-only --ttl 365d --label t3code-mcp";

/** `check` fails this long before a token expires (paired tokens last 30 days). */
export const EXPIRY_WARNING_MS = 7 * 24 * 3600 * 1000;

export const UPGRADE_FIX =
	"upgrade T3 Code to 0.1.0 or later (orchestration protocol 2)";

export interface ProbeOptions {
	fetch?: FetchLike;
	/** Per request; default 5000 ms. */
	timeoutMs?: number;
	now?: () => number;
}

/** An error's text, which may quote the server: redacted like all outside text. */
const message = (err: unknown) =>
	redact(err instanceof Error ? err.message : String(err));

function tokenFix(m: MachineConfig): string {
	if (m.tokenFile !== null)
		return `mint a pairing link on the T3 machine (\`t3 auth pairing create --scope orchestration:read --scope orchestration:operate --label t3code-mcp\`) and run \`t3code-mcp pair <pairing-url> --token-file ${m.tokenFile}\` here (no restart needed)`;
	return `on the T3 machine run \`${TOKEN_COMMAND}\`, then \`export ${m.tokenEnv}=<token>\` where t3code-mcp runs (the name comes from token_env in [machines.${m.name}])`;
}

/** Where the machine's token comes from, as the checks name it. */
function tokenSource(m: MachineConfig): string {
	return m.tokenFile !== null ? `token file ${m.tokenFile}` : `${m.tokenEnv}`;
}

/** ✓ with the expiry, or ✗ within 7 days of it (or past it). */
export function expiryCheck(
	machine: MachineConfig,
	expiresAt: string | null,
	now: number,
): CheckResult {
	const name = "token expiry";
	if (expiresAt === null)
		return { name, ok: true, detail: "T3 does not say when the token expires" };
	const left = Date.parse(expiresAt) - now;
	const days = Math.floor(left / (24 * 3600 * 1000));
	const inDays =
		left <= 0
			? "expired"
			: days >= 1
				? `in ${days} day${days === 1 ? "" : "s"}`
				: "in less than a day";
	if (left > EXPIRY_WARNING_MS)
		return { name, ok: true, detail: `expires at ${expiresAt} (${inDays})` };
	return {
		name,
		ok: false,
		detail: `expires at ${expiresAt} (${inDays}): it stops working then, with no refresh`,
		fix: `mint a new token before then: ${tokenFix(machine)}`,
	};
}

function describeProject(p: ProjectShell): string {
	return `"${p.title}" (${p.workspaceRoot})`;
}

/**
 * Runs every check for one machine. Checks that depend on an earlier one (the server must
 * answer before its protocol can be read) are left out when that one fails, so every ✗ is a
 * cause and not a consequence.
 *
 * @example const report = await probeMachine(config.machines[0]);
 */
export async function probeMachine(
	machine: MachineConfig,
	options: ProbeOptions = {},
): Promise<MachineReport> {
	return (await probeMachineShell(machine, options)).report;
}

/**
 * `probeMachine`, and the projects its `projects` allow when its shell could be read (the
 * machine is online for `check`'s client lines); undefined when it could not.
 */
export async function probeMachineShell(
	machine: MachineConfig,
	options: ProbeOptions = {},
): Promise<{ report: MachineReport; projects: ProjectShell[] | undefined }> {
	const { report, projects } = await probe(machine, options);
	if (projects === undefined) return { report, projects };
	try {
		const allows = compileProjectMatcher(machine.projects);
		return { report, projects: projects.filter((p) => allows(p)) };
	} catch {
		return { report, projects: [] };
	}
}

async function probe(
	machine: MachineConfig,
	options: ProbeOptions,
): Promise<{ report: MachineReport; projects?: ProjectShell[] }> {
	const checks: CheckResult[] = [];
	const report: MachineReport = {
		name: machine.name,
		url: machine.url,
		checks,
	};
	// Read now, as the server reads a token file at every connect.
	const token = await machineToken(machine);
	const http = createT3Http({
		url: machine.url,
		token: token.token,
		fetch: options.fetch,
		timeoutMs: options.timeoutMs ?? 5_000,
	});

	// Local: no network needed to know the token is missing.
	const tokenPresent = token.token !== undefined;
	const tokenCheck: CheckResult = tokenPresent
		? {
				name: "token present",
				ok: true,
				detail:
					machine.tokenFile !== null
						? `token file ${machine.tokenFile} is readable`
						: `${machine.tokenEnv} is set`,
			}
		: {
				name: "token present",
				ok: false,
				detail:
					machine.tokenFile !== null
						? (token.problem ?? "no token")
						: `${machine.tokenEnv} (token_env) is unset or empty`,
				fix: tokenFix(machine),
			};
	// A loose mode is a ⚠ beside the token line, wherever that line goes.
	const tokenChecks: CheckResult[] =
		token.warning === undefined
			? [tokenCheck]
			: [
					tokenCheck,
					{
						name: "token file permissions",
						ok: true,
						warning: true,
						detail: token.warning,
						fix: `\`chmod 600 ${machine.tokenFile}\`: only the user t3code-mcp runs as needs to read it`,
					},
				];

	let descriptor: Awaited<ReturnType<typeof http.descriptor>>;
	try {
		descriptor = await http.descriptor();
		const version = redact(descriptor.serverVersion ?? "unknown version");
		checks.push({
			name: "reachable",
			ok: true,
			detail: `T3 Code ${version} answers at ${machine.url}`,
		});
	} catch (err) {
		checks.push({
			name: "reachable",
			ok: false,
			detail: message(err),
			fix: `start T3 Code on that machine, or correct url in [machines.${machine.name}] (the server origin, e.g. http://100.64.0.5:3773), and check that this host can reach it (firewall, tailnet)`,
		});
		checks.push(...tokenChecks);
		return { report };
	}

	const protocol = descriptor.orchestrationProtocolVersion;
	if (protocol !== 2) {
		checks.push({
			name: "orchestration protocol 2",
			ok: false,
			detail: `the server reports ${protocol === undefined ? "no orchestrationProtocolVersion (protocol 1)" : `protocol ${protocol}`}${descriptor.serverVersion ? `, T3 Code ${redact(descriptor.serverVersion)}` : ""}`,
			fix:
				protocol !== undefined && protocol > 2
					? tooOldFor(protocol)
					: UPGRADE_FIX,
		});
		checks.push(...tokenChecks);
		return { report };
	}
	checks.push({
		name: "orchestration protocol 2",
		ok: true,
		detail: "orchestrationProtocolVersion is 2",
	});

	checks.push(...tokenChecks);
	if (!tokenPresent) return { report };

	try {
		const session = await http.authSession();
		if (!session.authenticated) {
			checks.push({
				name: "authenticated",
				ok: false,
				detail: `the server did not accept the token in ${tokenSource(machine)} (expired, revoked or for another server)`,
				fix: tokenFix(machine),
			});
			return { report };
		}
		checks.push({
			name: "authenticated",
			ok: true,
			detail: `the token in ${tokenSource(machine)} is accepted`,
		});
		const scopes = session.scopes ?? [];
		const missing = [READ_SCOPE, OPERATE_SCOPE].filter(
			(s) => !scopes.includes(s),
		);
		checks.push(
			missing.length === 0
				? {
						name: "scopes",
						ok: true,
						detail: `${READ_SCOPE} and ${OPERATE_SCOPE}`,
					}
				: {
						name: "scopes",
						ok: false,
						detail: `missing ${missing.join(" and ")} (the token has ${scopes.length > 0 ? scopes.join(", ") : "no scopes"})`,
						fix: tokenFix(machine),
					},
		);
		checks.push(
			expiryCheck(machine, sessionExpiry(session), (options.now ?? Date.now)()),
		);
	} catch (err) {
		checks.push({
			name: "authenticated",
			ok: false,
			detail: message(err),
			fix: tokenFix(machine),
		});
		return { report };
	}

	let projects: ProjectShell[] | undefined;
	try {
		const shell = await http.shell();
		projects = shell.projects;
		checks.push({
			name: "shell readable",
			ok: true,
			detail: `${shell.projects.length} project${shell.projects.length === 1 ? "" : "s"}, ${shell.threads.length} thread${shell.threads.length === 1 ? "" : "s"}`,
		});
	} catch (err) {
		checks.push({
			name: "shell readable",
			ok: false,
			detail: message(err),
			fix: `issue a token with both scopes: \`${TOKEN_COMMAND}\``,
		});
	}

	try {
		await http.websocketTicket();
		checks.push({
			name: "websocket ticket",
			ok: true,
			detail: "a ticket for /ws was minted",
		});
	} catch (err) {
		checks.push({
			name: "websocket ticket",
			ok: false,
			detail: message(err),
			fix: `issue a token with both scopes: \`${TOKEN_COMMAND}\``,
		});
	}

	if (projects !== undefined) checks.push(...patternChecks(machine, projects));
	return { report, projects };
}

/** One check per pattern: the titles it allows, or ✗ with every visible project listed. */
export function patternChecks(
	machine: MachineConfig,
	projects: ProjectShell[],
): CheckResult[] {
	const visible =
		projects.length === 0
			? "the server has no projects"
			: `projects on the server: ${projects.map(describeProject).join(", ")}`;
	return machine.projects.map((pattern) => {
		const name = `projects ${JSON.stringify(pattern)}`;
		let matches: ProjectShell[];
		try {
			const match = compileProjectMatcher([pattern]);
			matches = projects.filter((p) => match(p));
		} catch (err) {
			return {
				name,
				ok: false,
				detail: message(err),
				fix: `correct the pattern in [machines.${machine.name}] projects`,
			};
		}
		if (matches.length === 0) {
			return {
				name,
				ok: false,
				detail: `matches no project; ${visible}`,
				fix: `edit projects in [machines.${machine.name}]: each pattern is matched against a project's title and its workspace root ("*" allows all)`,
			};
		}
		return {
			name,
			ok: true,
			detail: `matches ${matches.map((p) => `"${p.title}"`).join(", ")}`,
		};
	});
}
