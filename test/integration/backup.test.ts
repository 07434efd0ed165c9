/**
 * `t3code-mcp backup <file>` beside a process that holds the state file (its lock and an open
 * write transaction, as a running server does): the copy has what was committed and nothing
 * else, the holder keeps its lock, the copy opens as a state file again (restore), and an
 * existing file is never written over.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	copyFileSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APPLICATION_ID, openDb } from "../../src/store/db.ts";
import { openState, StateInUseError } from "../../src/store/state-file.ts";
import { runToExit } from "../helpers/process.ts";

const ROOT = join(import.meta.dir, "../..");
const STATE_FILE = join(ROOT, "src/store/state-file.ts");

/** Opens the state as `serve` does (lock + migrations), commits 3 threads, leaves a 4th open. */
const HOLDER = `
import { openState } from ${JSON.stringify(STATE_FILE)};
const { db } = openState(process.argv[1]);
const add = db.query("INSERT INTO threads (thread_id, machine, project_id, title, created_at, updated_at) VALUES (?, 'mac', 'p', 'a title', 1, 1)");
for (const id of ["t1", "t2", "t3"]) add.run(id);
db.exec("BEGIN IMMEDIATE");
add.run("uncommitted");
process.stdout.write("ready\\n");
for await (const _ of Bun.stdin.stream()) {}
`;

let dir: string;
let state: string;
let holder: ReturnType<typeof Bun.spawn>;

function backup(file: string, extra: Record<string, string> = {}) {
	return runToExit(
		[process.execPath, join(ROOT, "src/index.ts"), "backup", file],
		{
			cwd: dir,
			env: {
				PATH: process.env.PATH ?? "",
				T3CODE_MCP_CONFIG: join(dir, "absent.toml"),
				T3CODE_MCP_STATE: state,
				...extra,
			},
			timeout: 15_000,
		},
	);
}

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-backup-"));
	state = join(dir, "state", "t3code-mcp.sqlite");
	holder = Bun.spawn([process.execPath, "-e", HOLDER, state], {
		stdin: "pipe",
		stdout: "pipe",
		stderr: "inherit",
	});
	const reader = (holder.stdout as ReadableStream<Uint8Array>).getReader();
	const { value } = await reader.read();
	expect(new TextDecoder().decode(value)).toBe("ready\n");
	reader.releaseLock();
});

afterAll(async () => {
	(holder.stdin as import("bun").FileSink).end();
	await holder.exited;
	rmSync(dir, { recursive: true, force: true });
});

describe("t3code-mcp backup", () => {
	test("copies the committed state while another process holds it, and says what it wrote", async () => {
		const result = await backup("copy.sqlite");
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		const file = join(dir, "copy.sqlite");
		expect(result.stdout).toStartWith(`backed up ${state} to ${file}: `);
		expect(result.stdout).toMatch(
			/: [\d.]+ KiB, schema version \d+, 3 threads, 0 events\n$/,
		);
		expect(statSync(file).mode & 0o777).toBe(0o600);
		const copy = new Database(file, { readonly: true });
		try {
			const ids = copy
				.query("SELECT thread_id FROM threads ORDER BY thread_id")
				.all()
				.map((r) => (r as { thread_id: string }).thread_id);
			expect(ids).toEqual(["t1", "t2", "t3"]);
			const meta = (pragma: string) =>
				Object.values(copy.query(`PRAGMA ${pragma}`).get() as object)[0];
			expect(meta("application_id")).toBe(APPLICATION_ID);
			expect(meta("user_version")).toBeGreaterThan(0);
		} finally {
			copy.close();
		}
	});

	test("the holder keeps its lock: a second server on the file is still refused", () => {
		expect(() => openState(state)).toThrow(StateInUseError);
	});

	test("the copy restores: opened as a state file it needs no migration and has the threads", () => {
		const restored = join(dir, "restored", "t3code-mcp.sqlite");
		mkdirSync(join(dir, "restored"));
		copyFileSync(join(dir, "copy.sqlite"), restored);
		const { db, lock } = openState(restored);
		try {
			expect(
				(db.query("SELECT count(*) AS n FROM threads").get() as { n: number })
					.n,
			).toBe(3);
		} finally {
			db.close();
			lock?.release();
		}
		// Migrations on start are idempotent for a copy at the current schema.
		const again = openDb(restored);
		again.close();
	});

	test("never writes over an existing file, and names it", async () => {
		const file = join(dir, "taken.sqlite");
		writeFileSync(file, "keep me");
		const result = await backup(file);
		expect(result.code).toBe(1);
		expect(result.stdout).toBe("");
		expect(result.stderr).toBe(
			`t3code-mcp backup: ${file} already exists: backup never writes over a file; name a new one (e.g. with the date in it)\n`,
		);
		expect(readFileSync(file, "utf8")).toBe("keep me");
	});

	test("a directory that does not exist, or no state file: exit 1 naming the path, nothing left behind", async () => {
		const nowhere = join(dir, "no-such-dir", "copy.sqlite");
		const missingDir = await backup(nowhere);
		expect(missingDir.code).toBe(1);
		expect(missingDir.stderr).toContain(`cannot create ${nowhere}`);

		const absent = join(dir, "absent.sqlite");
		const noState = await backup(join(dir, "never.sqlite"), {
			T3CODE_MCP_STATE: absent,
		});
		expect(noState.code).toBe(1);
		expect(noState.stderr).toContain(`no state file at ${absent}`);
		expect(existsSync(join(dir, "never.sqlite"))).toBe(false);
	});

	test("a state file that is not sqlite: exit 1, the empty target removed", async () => {
		const junk = join(dir, "junk.sqlite");
		writeFileSync(junk, "not a database at all, just text".repeat(40));
		const result = await backup(join(dir, "junk-copy.sqlite"), {
			T3CODE_MCP_STATE: junk,
		});
		expect(result.code).toBe(1);
		expect(result.stderr).toContain(`cannot copy ${junk} to`);
		expect(existsSync(join(dir, "junk-copy.sqlite"))).toBe(false);
	});

	test("needs its file argument (exit 2)", async () => {
		const result = await runToExit(
			[process.execPath, join(ROOT, "src/index.ts"), "backup"],
			{ cwd: dir, env: { PATH: process.env.PATH ?? "" }, timeout: 15_000 },
		);
		expect(result.code).toBe(2);
		expect(result.stderr).toContain("usage: t3code-mcp backup <file>");
	});
});
