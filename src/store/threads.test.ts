/** The thread store's reads leave out hidden records; older rows learn their project from events. */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb } from "./db.ts";
import { createThreadStore } from "./threads.ts";

test("a hidden record is not read by get, all or watchedOn, yet stays stored", () => {
	const db = openDb(":memory:");
	let allowed = ["open"];
	const threads = createThreadStore(db, (r) =>
		allowed.includes(r.project_title ?? ""),
	);
	for (const [id, project] of [
		["t-open", "open"],
		["t-closed", "closed"],
	] as const) {
		threads.upsert({
			threadId: id,
			machine: "m",
			projectId: `p-${project}`,
			projectTitle: project,
			projectPath: `/srv/${project}`,
			title: id,
			origin: null,
			watched: true,
			now: 1,
		});
	}
	expect(threads.get("t-closed")).toBeUndefined();
	expect(threads.all().map((r) => r.thread_id)).toEqual(["t-open"]);
	expect(threads.watchedOn("m")).toEqual(["t-open"]);
	expect(threads.isHidden("t-closed")).toBe(true);
	expect(threads.isHidden("t-open")).toBe(false);
	expect(threads.isHidden("never-seen")).toBe(false);
	allowed = ["open", "closed"];
	expect(threads.get("t-closed")?.project_path).toBe("/srv/closed");
	expect(threads.watchedOn("m").sort()).toEqual(["t-closed", "t-open"]);
});

test("an upsert without the project's title and path keeps the stored ones", () => {
	const db = openDb(":memory:");
	const threads = createThreadStore(db);
	const base = {
		threadId: "t1",
		machine: "m",
		projectId: "p1",
		title: "t",
		origin: null,
		watched: true,
		now: 1,
	};
	threads.upsert({ ...base, projectTitle: "demo", projectPath: "/srv/demo" });
	threads.upsert({ ...base, watched: false });
	expect(threads.get("t1")).toMatchObject({
		project_title: "demo",
		project_path: "/srv/demo",
		watched: 0,
	});
});

test("records from before the project columns take the project from their latest event", () => {
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-threads-"));
	try {
		const path = join(dir, "state.sqlite");
		let db = openDb(path);
		db.exec(
			"ALTER TABLE threads DROP COLUMN project_title; ALTER TABLE threads DROP COLUMN project_path; ALTER TABLE operations DROP COLUMN machine; ALTER TABLE operations DROP COLUMN project_id; ALTER TABLE operations DROP COLUMN project_title; ALTER TABLE operations DROP COLUMN project_path; PRAGMA user_version = 6",
		);
		db.exec(
			`INSERT INTO threads (thread_id, machine, project_id, title, created_at, updated_at) VALUES ('t1', 'm', 'p1', 't', 0, 0), ('t2', 'm', 'p2', 't', 0, 0);
			 INSERT INTO events (id, thread_id, thread_seq, dedupe_key, type, body, status, next_attempt_at, created_at) VALUES
			 ('e1', 't1', 1, 'a', 'thread.completed', '{"project":{"id":"p1","title":"old","path":"/old"}}', 'delivered', 0, 0),
			 ('e2', 't1', 2, 'b', 'thread.completed', '{"project":{"id":"p1","title":"demo","path":"/srv/demo"}}', 'pending', 0, 0);`,
		);
		db.close();
		db = openDb(path);
		const threads = createThreadStore(db);
		expect(threads.get("t1")).toMatchObject({
			project_title: "demo",
			project_path: "/srv/demo",
		});
		expect(threads.get("t2")).toMatchObject({
			project_title: null,
			project_path: null,
		});
		db.close();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
