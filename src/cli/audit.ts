/**
 * `t3code-mcp audit [--since DURATION|ISO] [--client NAME] [--thread ID] [--json]`: the audit
 * of the state file, newest first (CONTRACT.md "Clients and rights"): a table, or one JSON
 * object a line. Reads the file read-only, so it works beside a running server. Every value in
 * the table comes from a caller (ids, keys, a refused call's arguments): control and bidi
 * characters are shown escaped and long values cut (util/terminal-safe.ts), so no value can
 * print a line of its own or reorder one (CONTRACT.md "Trust round three").
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { ConfigError, loadConfig } from "../config/index.ts";
import {
	type AuditFilter,
	type AuditRow,
	createAuditStore,
} from "../store/audit.ts";
import { terminalSafe } from "../util/terminal-safe.ts";
import { hasFlag, type ParsedArgs, UsageError } from "./args.ts";
import { AUDIT_ARGS } from "./check-args.ts";
import { EXIT } from "./help.ts";

const UNITS: Record<string, number> = {
	s: 1_000,
	m: 60_000,
	h: 3_600_000,
	d: 86_400_000,
	w: 604_800_000,
};

/** `7d`, `24h`, `30m`, `90s`, `2w`, or an ISO time: the epoch milliseconds it names. */
export function parseSince(text: string, now: number): number {
	const match = /^(\d+)([smhdw])$/.exec(text);
	if (match) return now - Number(match[1]) * (UNITS[match[2] ?? "s"] ?? 0);
	const at = Date.parse(text);
	if (/^\d{4}-\d{2}-\d{2}/.test(text) && !Number.isNaN(at)) return at;
	throw new UsageError(
		`--since ${JSON.stringify(text)}: expected a duration like 7d, 24h, 30m or an ISO time like 2026-12-01T00:00:00Z`,
		AUDIT_ARGS.usage,
	);
}

const last = (args: ParsedArgs, flag: string) => args.flags.get(flag)?.at(-1);

export async function runAudit(
	args: ParsedArgs,
	write: (text: string) => void = (t) => process.stdout.write(t),
	now = Date.now(),
): Promise<number> {
	let filter: AuditFilter;
	try {
		const since = last(args, "--since");
		filter = {
			since: since === undefined ? undefined : parseSince(since, now),
			client: last(args, "--client"),
			thread: last(args, "--thread"),
		};
	} catch (error) {
		if (!(error instanceof UsageError)) throw error;
		process.stderr.write(
			`t3code-mcp audit: ${error.message}\nusage: ${error.usage}\n`,
		);
		return EXIT.usage;
	}
	let statePath: string;
	try {
		statePath = (await loadConfig()).server.statePath;
	} catch (error) {
		if (!(error instanceof ConfigError)) throw error;
		process.stderr.write(`t3code-mcp audit: ${error.message}\n`);
		return EXIT.config;
	}
	if (statePath === ":memory:" || !existsSync(statePath)) {
		process.stderr.write(
			`t3code-mcp audit: no state file at ${statePath}: nothing was recorded yet (serve writes it)\n`,
		);
		return EXIT.failure;
	}
	const rows = readAudit(statePath, filter);
	if (hasFlag(args, "--json"))
		for (const row of rows)
			write(
				`${JSON.stringify({ ...row, at: new Date(row.at).toISOString() })}\n`,
			);
	else write(renderTable(rows));
	return EXIT.ok;
}

function readAudit(path: string, filter: AuditFilter): AuditRow[] {
	const db = new Database(path, { readonly: true });
	try {
		const has = db
			.query(
				"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'",
			)
			.get();
		if (!has) return [];
		return createAuditStore(db, Number.POSITIVE_INFINITY).list(filter);
	} finally {
		db.close();
	}
}

const COLUMNS = [
	"at",
	"client",
	"tool",
	"result",
	"detail",
	"via",
	"machine",
	"thread_id",
	"run_id",
	"project_id",
	"idempotency_key",
] as const;

/** The widest a value is printed; longer ones end in `…` (`--json` has them whole). */
const MAX_CELL = 40;

function renderTable(rows: AuditRow[]): string {
	if (rows.length === 0) return "no audit rows\n";
	const cells = rows.map((r) =>
		COLUMNS.map((c) =>
			c === "at"
				? new Date(r.at).toISOString()
				: r[c] === null
					? "-"
					: terminalSafe(String(r[c]), MAX_CELL),
		),
	);
	const widths = COLUMNS.map((c, i) =>
		Math.max(c.length, ...cells.map((row) => row[i]?.length ?? 0)),
	);
	const line = (values: readonly string[]) =>
		`${values
			.map((v, i) => v.padEnd(widths[i] ?? 0))
			.join("  ")
			.trimEnd()}\n`;
	return line(COLUMNS) + cells.map(line).join("");
}
