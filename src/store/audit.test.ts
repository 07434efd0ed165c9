/**
 * Audit rows gain `detail` and `via` (CONTRACT.md "Trust round three"): recorded and listed
 * whole (escaping is for printing, cli/audit.ts), added to a state file written before them
 * (its rows keep null), and listed from such a file not yet migrated (read-only `audit`).
 */
import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AuditRow, createAuditStore } from "./audit.ts";
import { AUDIT_DETAIL_MIGRATION, openDb } from "./db.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0))
		rmSync(dir, { recursive: true, force: true });
});

const row = (over: Partial<AuditRow> = {}): AuditRow => ({
	at: Date.now(),
	client: "agent",
	tool: "t3_manage",
	machine: "demo",
	project_id: null,
	thread_id: "t-1",
	run_id: null,
	result: "ok",
	idempotency_key: null,
	detail: "archive",
	via: "mcp",
	...over,
});

test("detail and via are recorded and listed; values are kept as given", () => {
	const db = openDb(":memory:");
	const audit = createAuditStore(db, 90);
	const evil = "k\n\u001b[2J\u202e";
	audit.record(row({ idempotency_key: evil }));
	audit.record(
		row({
			tool: "t3_answer",
			detail: "decline",
			via: "stdio",
			at: Date.now() + 1,
		}),
	);
	const [answer, manage] = audit.list();
	expect(answer).toMatchObject({
		tool: "t3_answer",
		detail: "decline",
		via: "stdio",
	});
	expect(manage).toMatchObject({
		detail: "archive",
		via: "mcp",
		idempotency_key: evil,
	});
});

function oldFile(): string {
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-audit-"));
	dirs.push(dir);
	const path = join(dir, "state.sqlite");
	// The file as the version before left it: an audit table without the two columns.
	const old = openDb(path);
	old.exec("ALTER TABLE audit DROP COLUMN detail");
	old.exec("ALTER TABLE audit DROP COLUMN via");
	old.exec(
		`INSERT INTO audit (at, client, tool, result) VALUES (1, 'ops', 't3_delete', 'ok')`,
	);
	old.exec(`PRAGMA user_version = ${AUDIT_DETAIL_MIGRATION}`);
	old.close();
	return path;
}

test("a file from before gains the columns; its rows keep null", () => {
	const path = oldFile();
	const db = openDb(path);
	const audit = createAuditStore(db, Number.POSITIVE_INFINITY);
	audit.record(row({ at: 2 }));
	expect(audit.list().map((r) => [r.tool, r.detail, r.via])).toEqual([
		["t3_manage", "archive", "mcp"],
		["t3_delete", null, null],
	]);
	db.close();
});

test("a file not migrated yet is listed read-only, detail and via null", () => {
	const path = oldFile();
	const db = new Database(path, { readonly: true });
	const rows = createAuditStore(db, Number.POSITIVE_INFINITY).list();
	db.close();
	expect(rows).toEqual([
		{
			at: 1,
			client: "ops",
			tool: "t3_delete",
			machine: null,
			project_id: null,
			thread_id: null,
			run_id: null,
			result: "ok",
			idempotency_key: null,
			detail: null,
			via: null,
		},
	]);
});
