/**
 * Opening the state file as a start-up step: take the process lock (state-lock.ts), refuse
 * files that are not ours (a directory, another format, another application's sqlite), and
 * turn every failure into a StartupError that says which file, what is wrong and what to do.
 * `check` asks the same questions without changing anything (`inspectStatePath`).
 */
import { Database } from "bun:sqlite";
import {
	closeSync,
	existsSync,
	mkdirSync,
	openSync,
	readSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { StartupError } from "../config/startup-error.ts";
import { APPLICATION_ID, type Db, OWN_TABLES, openDb } from "./db.ts";
import {
	type LockAttempt,
	lockFileOf,
	lockState,
	type StateLock,
} from "./state-lock.ts";

const SQLITE_HEADER = "SQLite format 3\0";
const FIX_WRITABLE =
	"point T3CODE_MCP_STATE (or [server] state) at a writable location, or make it writable for this user";
const FIX_OWN_FILE =
	"point T3CODE_MCP_STATE (or [server] state) at a file of its own, e.g. a new path in an empty directory";

export interface OpenedState {
	db: Db;
	/** null for `:memory:`. */
	lock: StateLock | null;
}

/** The state file is in use by another live process (`stdio` falls back to memory then). */
export class StateInUseError extends StartupError {
	constructor(
		readonly file: string,
		readonly holder: string,
	) {
		super(
			file,
			`in use by another t3code-mcp process (${holder}), which holds ${file}.lock`,
			"stop that process, or give this one its own T3CODE_MCP_STATE",
		);
	}
}

/** Lock, check and open (migrating) the state database, or throw a StartupError. */
export function openState(path: string): OpenedState {
	if (path === ":memory:") return { db: openDb(path), lock: null };
	const problem = shapeProblem(path);
	if (problem) throw new StartupError(path, problem.problem, problem.fix);
	try {
		mkdirSync(dirname(path), { recursive: true });
	} catch (error) {
		throw new StartupError(
			path,
			`cannot create the directory ${dirname(path)} (${errorText(error)})`,
			FIX_WRITABLE,
		);
	}
	let attempt: LockAttempt;
	try {
		attempt = lockState(path);
	} catch (error) {
		throw new StartupError(
			path,
			`cannot create its lock file ${lockFileOf(path)} (${errorText(error)})`,
			FIX_WRITABLE,
		);
	}
	if (attempt.held) throw new StateInUseError(path, attempt.holder);
	const { lock } = attempt;
	try {
		const foreign = contentProblem(path);
		if (foreign) throw new StartupError(path, foreign, FIX_OWN_FILE);
		return { db: openDb(path), lock };
	} catch (error) {
		lock.release();
		if (error instanceof StartupError) throw error;
		throw new StartupError(path, sqliteProblem(error), FIX_WRITABLE);
	}
}

export type Inspection =
	| { ok: true; detail: string }
	| { ok: false; detail: string; fix: string };

/**
 * What `check` reports for the state path: everything `openState` would refuse, found without
 * creating the file, its directories or a lock (a temporary file proves a directory writable,
 * since root passes every permission test but a read-only mount).
 */
export function inspectStatePath(path: string): Inspection {
	if (path === ":memory:")
		return { ok: true, detail: "in memory (nothing is kept)" };
	const shape = shapeProblem(path);
	if (shape)
		return { ok: false, detail: `${path} ${shape.problem}`, fix: shape.fix };
	let dir = dirname(path);
	while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
	if (!statSync(dir).isDirectory())
		return {
			ok: false,
			detail: `${dir} is not a directory`,
			fix: FIX_WRITABLE,
		};
	const probe = join(dir, `.${basename(path)}.check-${process.pid}`);
	try {
		writeFileSync(probe, "");
		rmSync(probe, { force: true });
	} catch (error) {
		const where =
			dir === dirname(path) ? dir : `${dir} (to create ${dirname(path)})`;
		return {
			ok: false,
			detail: `cannot write in ${where}: ${errorText(error)}`,
			fix: FIX_WRITABLE,
		};
	}
	if (!existsSync(path))
		return { ok: true, detail: `${path} will be created (${dir} is writable)` };
	try {
		const fd = openSync(path, "r+");
		closeSync(fd);
	} catch (error) {
		return {
			ok: false,
			detail: `${path} cannot be opened for writing: ${errorText(error)}`,
			fix: FIX_WRITABLE,
		};
	}
	let foreign: string | undefined;
	try {
		foreign = contentProblem(path);
	} catch (error) {
		foreign = sqliteProblem(error);
	}
	if (foreign)
		return { ok: false, detail: `${path} ${foreign}`, fix: FIX_OWN_FILE };
	return { ok: true, detail: `${path} exists and is writable` };
}

/** Problems visible from the path alone: a directory, something that is no regular file. */
function shapeProblem(
	path: string,
): { problem: string; fix: string } | undefined {
	if (!existsSync(path)) return undefined;
	const stat = statSync(path);
	if (stat.isDirectory())
		return {
			problem: "is a directory",
			fix: `point T3CODE_MCP_STATE (or [server] state) at a file, e.g. ${join(path, "t3code-mcp.sqlite")}`,
		};
	if (!stat.isFile())
		return { problem: "is not a regular file", fix: FIX_OWN_FILE };
	return undefined;
}

/**
 * Is an existing file one of our databases? Empty files are (sqlite starts them); others must
 * carry the sqlite header and our application id, or (files from before the id) our first tables.
 */
function contentProblem(path: string): string | undefined {
	if (!existsSync(path) || statSync(path).size === 0) return undefined;
	const head = Buffer.alloc(16);
	const fd = openSync(path, "r");
	try {
		readSync(fd, head, 0, 16, 0);
	} finally {
		closeSync(fd);
	}
	if (head.toString("latin1") !== SQLITE_HEADER)
		return "is not a sqlite database (it holds something else; it was left untouched)";
	const db = new Database(path, { readonly: true });
	try {
		const appId = (
			db.query("PRAGMA application_id").get() as { application_id: number }
		).application_id;
		const tables = (
			db
				.query(
					"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
				)
				.all() as { name: string }[]
		).map((t) => t.name);
		const ours =
			appId === APPLICATION_ID ||
			(appId === 0 &&
				(tables.length === 0 || OWN_TABLES.every((t) => tables.includes(t))));
		if (ours) return undefined;
		const shown =
			tables.slice(0, 5).join(", ") + (tables.length > 5 ? ", …" : "");
		return `is a sqlite database of another application (${appId === 0 ? `tables: ${shown}` : `application id ${appId}`}); it was left untouched`;
	} finally {
		db.close();
	}
}

function sqliteProblem(error: unknown): string {
	const code = (error as { code?: unknown })?.code;
	const text = errorText(error);
	if (code === "SQLITE_NOTADB") return `is not a sqlite database (${text})`;
	if (typeof code === "string" && code.startsWith("SQLITE_READONLY"))
		return `is read-only (${text})`;
	if (typeof code === "string" && code.startsWith("SQLITE_CANTOPEN"))
		return `cannot be opened (${text})`;
	return `cannot be used (${text})`;
}

function errorText(error: unknown): string {
	if (!(error instanceof Error)) return String(error);
	const code = (error as { code?: unknown }).code;
	const known: Record<string, string> = {
		EROFS: "read-only file system",
		EACCES: "permission denied",
		EPERM: "operation not permitted",
		ENOENT: "no such file or directory",
		ENOTDIR: "a parent is not a directory",
		ENOSPC: "no space left on the device",
	};
	return typeof code === "string" && known[code] ? known[code] : error.message;
}
