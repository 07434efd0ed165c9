/**
 * A state file written before every T3 text was masked is masked once when the server starts
 * on it (CONTRACT.md "HTTP"): titles, project titles and paths, event bodies and delivery
 * errors, stored results. Afterwards the secret is nowhere in the file's bytes, and the file
 * records that the step ran.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearSecretsForTest, MASK, registerSecrets } from "../util/redact.ts";
import { MASK_MIGRATION, openDb } from "./db.ts";
import { createOutbox } from "./outbox.ts";
import { createThreadStore } from "./threads.ts";

const SECRET = "machine-bearer-0123456789abcdef";
const dirs: string[] = [];
afterEach(() => {
	clearSecretsForTest();
	for (const dir of dirs.splice(0))
		rmSync(dir, { recursive: true, force: true });
});

function fileBytes(path: string): string {
	let out = readFileSync(path).toString("latin1");
	if (existsSync(`${path}-wal`))
		out += readFileSync(`${path}-wal`).toString("latin1");
	return out;
}

test("an old state file holding a secret is masked once at start, and its bytes no longer hold it", () => {
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-mask-"));
	dirs.push(dir);
	const path = join(dir, "state.sqlite");
	// The file as an older version left it: texts stored as T3 sent them.
	const old = openDb(path);
	const version = (
		old.query("PRAGMA user_version").get() as { user_version: number }
	).user_version;
	old.exec(`INSERT INTO threads (thread_id, machine, project_id, project_title, project_path, title, created_at, updated_at)
		VALUES ('t-1', 'm', 'p-1', 'proj ${SECRET}', '/srv/${SECRET}', 'title ${SECRET}', 1, 1)`);
	old.exec(`INSERT INTO events (id, thread_id, thread_seq, dedupe_key, type, body, status, next_attempt_at, last_error, created_at)
		VALUES ('e-1', 't-1', 1, 'k', 'thread.completed', '${JSON.stringify({ title: `t ${SECRET}`, message: `said ${SECRET}` })}', 'pending', 1, 'HTTP 400: got ${SECRET}', 1)`);
	old.exec(`INSERT INTO operations (tool, key, result, project_title, project_path, created_at)
		VALUES ('t3_manage', 'k1', '${JSON.stringify({ title: SECRET })}', '${SECRET}', '/x/${SECRET}', 1)`);
	old.exec(`PRAGMA user_version = ${MASK_MIGRATION}`);
	old.close();
	expect(fileBytes(path)).toContain(SECRET);

	registerSecrets([SECRET]);
	const db = openDb(path);
	expect(
		(db.query("PRAGMA user_version").get() as { user_version: number })
			.user_version,
	).toBe(version);
	const thread = createThreadStore(db).get("t-1");
	expect(thread?.title).toBe(`title ${MASK}`);
	expect(thread?.project_title).toBe(`proj ${MASK}`);
	expect(thread?.project_path).toBe(`/srv/${MASK}`);
	const [event] = createOutbox(db).forThread("t-1");
	expect(JSON.parse(event?.body ?? "{}")).toEqual({
		title: `t ${MASK}`,
		message: `said ${MASK}`,
	});
	expect(event?.last_error).toBe(`HTTP 400: got ${MASK}`);
	const op = db
		.query("SELECT result, project_title, project_path FROM operations")
		.get() as Record<string, string>;
	expect(op).toEqual({
		result: JSON.stringify({ title: MASK }),
		project_title: MASK,
		project_path: `/x/${MASK}`,
	});
	db.close();
	expect(fileBytes(path)).not.toContain(SECRET);
	expect(fileBytes(path)).not.toContain(SECRET.slice(0, 12));
});

test("new rows are stored masked: thread titles and paths, event bodies", () => {
	registerSecrets([SECRET]);
	const db = openDb(":memory:");
	const threads = createThreadStore(db);
	threads.upsert({
		threadId: "t-1",
		machine: "m",
		projectId: "p",
		projectTitle: `p ${SECRET}`,
		projectPath: `/p/${SECRET}`,
		title: `t ${SECRET}`,
		origin: null,
		watched: true,
		now: 1,
	});
	threads.observe(
		"t-1",
		{ runId: "r", status: "completed", requestId: null, title: `u ${SECRET}` },
		2,
	);
	const outbox = createOutbox(db);
	outbox.insert({
		id: "e-1",
		thread_id: "t-1",
		thread_seq: 1,
		dedupe_key: "k",
		type: "thread.completed",
		origin: null,
		body: JSON.stringify({ message: `m ${SECRET}` }),
		created_at: 1,
	});
	const record = threads.get("t-1");
	expect([record?.title, record?.project_title, record?.project_path]).toEqual([
		`u ${MASK}`,
		`p ${MASK}`,
		`/p/${MASK}`,
	]);
	expect(outbox.forThread("t-1")[0]?.body).toBe(
		JSON.stringify({ message: `m ${MASK}` }),
	);
});
