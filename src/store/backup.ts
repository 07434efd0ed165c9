/**
 * A consistent copy of the state file, taken while the server runs (`t3code-mcp backup <file>`).
 * sqlite's `VACUUM INTO` on a read-only connection writes one transaction's snapshot of the
 * whole database (WAL included) into a new file; it takes no lock of ours (`<state>.lock` stays
 * with the server) and only a read transaction of sqlite's, so the server keeps writing.
 * The backup is never written over an existing file: it is created empty and exclusively
 * (mode 0600: the state holds thread titles and webhook bodies), then filled.
 */
import { Database } from "bun:sqlite";
import { closeSync, existsSync, openSync, rmSync, statSync } from "node:fs";

export interface BackupResult {
	/** The state file that was copied. */
	from: string;
	/** The backup written. */
	to: string;
	bytes: number;
	/** `PRAGMA user_version`: the number of schema migrations the copy has. */
	schema: number;
	threads: number;
	events: number;
}

export class BackupError extends Error {
	override name = "BackupError";
}

/** Copies the sqlite database at `from` into the new file `to` (which must not exist). */
export function backupState(from: string, to: string): BackupResult {
	if (from === ":memory:")
		throw new BackupError(
			"the state is in memory (T3CODE_MCP_STATE or [server] state is :memory:): there is no file to back up",
		);
	if (!existsSync(from))
		throw new BackupError(
			`no state file at ${from}: nothing to back up (serve creates it; set T3CODE_MCP_STATE or [server] state if it lives elsewhere)`,
		);
	if (!statSync(from).isFile())
		throw new BackupError(
			`${from} is not a regular file: point T3CODE_MCP_STATE (or [server] state) at the state file`,
		);
	let fd: number;
	try {
		fd = openSync(to, "wx", 0o600);
	} catch (error) {
		const code = (error as { code?: unknown }).code;
		if (code === "EEXIST")
			throw new BackupError(
				`${to} already exists: backup never writes over a file; name a new one (e.g. with the date in it)`,
			);
		throw new BackupError(`cannot create ${to}: ${reason(error)}`);
	}
	closeSync(fd);
	try {
		const source = new Database(from, { readonly: true });
		try {
			source.exec("PRAGMA busy_timeout = 5000");
			source.query("VACUUM INTO ?").run(to);
		} finally {
			source.close();
		}
		const copy = new Database(to, { readonly: true });
		try {
			const check = copy.query("PRAGMA quick_check").get() as {
				quick_check: string;
			};
			if (check.quick_check !== "ok")
				throw new BackupError(
					`the copy in ${to} fails sqlite's quick_check (${check.quick_check})`,
				);
			const schema = (
				copy.query("PRAGMA user_version").get() as { user_version: number }
			).user_version;
			return {
				from,
				to,
				bytes: statSync(to).size,
				schema,
				threads: count(copy, "threads"),
				events: count(copy, "events"),
			};
		} finally {
			copy.close();
		}
	} catch (error) {
		rmSync(to, { force: true });
		if (error instanceof BackupError) throw error;
		throw new BackupError(
			`cannot copy ${from} to ${to}: ${reason(error)} (nothing was written)`,
		);
	}
}

function count(db: Database, table: string): number {
	const has = db
		.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
		.get(table);
	if (!has) return 0;
	return (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number })
		.n;
}

function reason(error: unknown): string {
	const code = (error as { code?: unknown })?.code;
	const known: Record<string, string> = {
		ENOENT: "its directory does not exist",
		EACCES: "permission denied",
		EPERM: "operation not permitted",
		EROFS: "read-only file system",
		ENOSPC: "no space left on the device",
		EISDIR: "it is a directory",
		SQLITE_NOTADB: "the state file is not a sqlite database",
	};
	if (typeof code === "string" && known[code]) return known[code];
	return error instanceof Error ? error.message : String(error);
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function size(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
	return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** What `backup` prints: where from, where to, and what the copy holds. */
export function describeBackup(r: BackupResult): string {
	return `backed up ${r.from} to ${r.to}: ${size(r.bytes)}, schema version ${r.schema}, ${plural(r.threads, "thread")}, ${plural(r.events, "event")}`;
}
