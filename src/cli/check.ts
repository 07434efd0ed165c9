/**
 * `t3code-mcp check [--json]`: validate the config, probe every machine (check-machine.ts), the
 * state path and each hook URL (hook-probe.ts), print one line per check with ✓/⚠/✗ and the fix
 * for each ✗ and ⚠. Exit 0 only when everything passes, 1 when a check fails, 3 on a
 * configuration error, 2 on a bad flag.
 */
import type { Env } from "../config/env.ts";
import {
	type AppConfig,
	ConfigError,
	configWarnings,
	loadConfig,
	openMcpWarning,
} from "../config/index.ts";
import { inspectStatePath } from "../store/state-file.ts";
import { lockFileOf, probeLock } from "../store/state-lock.ts";
import { maskCredentials, maskSecrets, urlOrigin } from "../util/redact.ts";
import { hasFlag, parseArgs, UsageError } from "./args.ts";
import { CHECK_ARGS } from "./check-args.ts";
import { clientChecks, type OnlineMachines } from "./check-clients.ts";
import {
	type CheckResult,
	type MachineReport,
	type ProbeOptions,
	probeMachineShell,
} from "./check-machine.ts";
import { EXIT } from "./help.ts";
import { probeUrl, type Reach } from "./hook-probe.ts";

export interface CheckReport {
	ok: boolean;
	config: { file: string | null; error?: string; checks: CheckResult[] };
	machines: MachineReport[];
}

export interface CheckDeps extends ProbeOptions {
	env?: Env;
	/** Connects to a hook URL, sending nothing (default hook-probe.ts). */
	probeHook?: (url: string) => Promise<Reach>;
	cwd?: string;
	write?: (text: string) => void;
}

/** Whether `serve` could use the state file at `path` (state-file.ts says what it refuses). */
export function statePathCheck(path: string): CheckResult {
	const name = "state file usable";
	const found = inspectStatePath(path);
	return found.ok
		? { name, ok: true, detail: found.detail }
		: { name, ok: false, detail: found.detail, fix: found.fix };
}

/**
 * Whether a server holds the state file. Beside a running server (`docker compose exec … check`)
 * its lock is expected, so held is a ✓ naming the holder; a free lock is a ✓ too.
 */
export function stateLockCheck(path: string): CheckResult | undefined {
	if (path === ":memory:") return undefined;
	const name = "state file lock";
	let probe: ReturnType<typeof probeLock>;
	try {
		probe = probeLock(path);
	} catch (error) {
		return {
			name,
			ok: false,
			detail: `cannot test the lock on ${lockFileOf(path)}: ${(error as Error).message}`,
			fix: "run check on the machine (or in the container) that runs the server",
		};
	}
	if (probe?.held)
		return {
			name,
			ok: true,
			detail: `held by the running server (${probe.holder})`,
		};
	return { name, ok: true, detail: "free: no server is using it now" };
}

/**
 * Where events go, by origin only (the URL's path often holds a secret), and whether the
 * receiver accepts a connection now (nothing is sent): ⚠ when not, since it may be down only for
 * now and the outbox keeps the events until it is back.
 */
async function hookCheck(
	hookUrl: string | undefined,
	probe: (url: string) => Promise<Reach>,
): Promise<CheckResult> {
	const name = "webhook";
	if (hookUrl === undefined)
		return {
			name,
			ok: true,
			detail:
				"not configured: events are recorded, not sent (set T3CODE_MCP_HOOK_URL)",
		};
	return probed(
		name,
		`events are POSTed to ${urlOrigin(hookUrl)} (the path is not shown)`,
		await probe(hookUrl),
		"start the receiver or correct T3CODE_MCP_HOOK_URL (events wait in the outbox meanwhile); `t3code-mcp hook test` sends it a signed test event",
	);
}

/** A probed hook's line: ✓ when it accepts connections, else a ⚠ (never a failure) with the fix. */
function probed(
	name: string,
	where: string,
	reach: Reach,
	fix: string,
): CheckResult {
	return reach.ok
		? { name, ok: true, detail: `${where}; it accepts connections` }
		: {
				name,
				ok: true,
				warning: true,
				detail: `${where}, which cannot be reached now: ${reach.reason}`,
				fix,
			};
}

/** The people hook of `[approvals]` (approval links), probed the same way. */
async function approvalsHookCheck(
	config: AppConfig,
	probe: (url: string) => Promise<Reach>,
): Promise<CheckResult | undefined> {
	const url = config.approvals?.hookUrl;
	if (url === undefined) return undefined;
	return probed(
		"approvals hook",
		`approval links are POSTed to ${urlOrigin(url)} (the path is not shown)`,
		await probe(url),
		"start the receiver or correct hook_url in [approvals]",
	);
}

function parseFlags(argv: string[]): { json: boolean } | string {
	try {
		return { json: hasFlag(parseArgs(argv, CHECK_ARGS), "--json") };
	} catch (error) {
		if (!(error instanceof UsageError)) throw error;
		return `t3code-mcp check: ${error.message}\nusage: ${error.usage}\n`;
	}
}

/**
 * `/mcp` without a bearer on a non-loopback address: a ⚠ that does not fail `check` (the
 * compose setup serves 0.0.0.0 behind its gateway on purpose).
 */
function openMcpCheck(config: AppConfig): CheckResult | undefined {
	const open = openMcpWarning(config);
	return (
		open && {
			name: "/mcp bearer",
			ok: true,
			warning: true,
			detail: open.detail,
			fix: open.fix,
		}
	);
}

function renderCheck(c: CheckResult): string {
	const mark = !c.ok ? "✗" : c.warning ? "⚠" : "✓";
	const line = `  ${mark} ${c.name}: ${c.detail}\n`;
	return c.fix ? `${line}      fix: ${c.fix}\n` : line;
}

/** The human-readable report; every line a check, every ✗ followed by its fix. */
export function renderReport(
	report: CheckReport,
	warnings: string[] = [],
): string {
	let out = `config ${report.config.file ?? "(none)"}\n`;
	for (const c of report.config.checks) out += renderCheck(c);
	for (const w of warnings) out += `  ⚠ ${w}\n`;
	for (const m of report.machines) {
		out += `\nmachine ${m.name} (${m.url})\n`;
		for (const c of m.checks) out += renderCheck(c);
	}
	const failed =
		report.config.checks.filter((c) => !c.ok).length +
		report.machines.reduce(
			(n, m) => n + m.checks.filter((c) => !c.ok).length,
			0,
		);
	const warned = [
		...report.config.checks,
		...report.machines.flatMap((m) => m.checks),
	].filter((c) => c.ok && c.warning).length;
	out += report.ok
		? `\nall checks passed${warned > 0 ? ` (${warned} warning${warned === 1 ? "" : "s"})` : ""}\n`
		: `\n${failed} check${failed === 1 ? "" : "s"} failed\n`;
	return out;
}

export async function runCheck(
	argv: string[],
	deps: CheckDeps = {},
): Promise<number> {
	const print = deps.write ?? ((text: string) => process.stdout.write(text));
	// Safety net: nothing printed shows a configured secret, whatever text it quotes.
	const write = (text: string) => print(maskSecrets(text));
	const flags = parseFlags(argv);
	if (typeof flags === "string") {
		process.stderr.write(flags);
		return EXIT.usage;
	}
	const env = deps.env ?? process.env;
	let config: Awaited<ReturnType<typeof loadConfig>>;
	try {
		config = await loadConfig({ env, cwd: deps.cwd });
	} catch (error) {
		if (!(error instanceof ConfigError)) throw error;
		if (flags.json) {
			const report: CheckReport = {
				ok: false,
				config: {
					file: error.file ?? null,
					error: error.message,
					checks: [{ name: "config valid", ok: false, detail: error.message }],
				},
				machines: [],
			};
			write(`${JSON.stringify(report, null, 2)}\n`);
		} else {
			write(
				error.message
					.split("\n")
					.map((line) => `✗ configuration error: ${line}\n`)
					.join(""),
			);
		}
		return EXIT.config;
	}

	const probed = await Promise.all(
		config.machines.map((m) => probeMachineShell(m, deps)),
	);
	const machines = probed.map((p) => p.report);
	// Online: its shell could be read; a client's reach is judged on these.
	const online: OnlineMachines = new Map();
	for (const [i, p] of probed.entries()) {
		const name = config.machines[i]?.name;
		if (name !== undefined && p.projects !== undefined)
			online.set(name, p.projects);
	}
	// Safety net: no detail shows a configured secret, whatever text it quotes.
	for (const m of machines)
		for (const c of m.checks) c.detail = maskCredentials(c.detail);
	const probeHook = deps.probeHook ?? ((url: string) => probeUrl(url));
	const [eventsHook, peopleHook] = await Promise.all([
		hookCheck(config.server.hookUrl, probeHook),
		approvalsHookCheck(config, probeHook),
	]);
	const lockCheck = stateLockCheck(config.server.statePath);
	const openCheck = openMcpCheck(config);
	const configChecks: CheckResult[] = [
		{
			name: "config valid",
			ok: true,
			detail:
				config.machines.length === 0
					? "no machines configured"
					: `${config.machines.length} machine${config.machines.length === 1 ? "" : "s"}: ${config.machines.map((m) => m.name).join(", ")}`,
		},
		statePathCheck(config.server.statePath),
		...(lockCheck ? [lockCheck] : []),
		eventsHook,
		...(peopleHook ? [peopleHook] : []),
		...(openCheck ? [openCheck] : []),
		...(await clientChecks(config, online)),
	];
	const ok =
		configChecks.every((c) => c.ok) &&
		machines.every((m) => m.checks.every((c) => c.ok));
	const report: CheckReport = {
		ok,
		config: { file: config.file, checks: configChecks },
		machines,
	};
	write(
		flags.json
			? `${JSON.stringify(report, null, 2)}\n`
			: renderReport(
					report,
					// Token warnings are already checks of their own.
					configWarnings(config).filter((w) => !/token_env|token_file/.test(w)),
				),
	);
	return ok ? EXIT.ok : EXIT.failure;
}
