/** The generic idempotency mechanism (`once`) and the migration of older request_id keys. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb } from "../../store/db.ts";
import { createOperationStore } from "../../store/operations.ts";
import { ThreadError } from "../errors.ts";
import { fingerprint, once } from "./idempotency.ts";

function setup(hidden: Set<string> = new Set()) {
	const db = openDb(":memory:");
	const operations = createOperationStore(db, (id) => hidden.has(id));
	let clock = Date.UTC(2026, 11, 1, 3, 0, 0);
	return { db, deps: { operations, now: () => clock++ } };
}

const op = (key: string | undefined, args: Record<string, unknown>) => ({
	tool: "t3_manage",
	key,
	args,
	threadId: "t1",
});

describe("once", () => {
	test("the same key and arguments run once and return the first result", async () => {
		const { deps } = setup();
		let runs = 0;
		const run = async () => ({
			threadId: "t1",
			result: { n: ++runs },
		});
		const a = await once(deps, op("k", { action: "archive" }), run);
		const b = await once(deps, op("k", { action: "archive" }), run);
		expect(a).toEqual({ n: 1 });
		expect(b).toEqual({ n: 1 });
		expect(runs).toBe(1);
	});

	test("without a key it simply runs", async () => {
		const { deps } = setup();
		let runs = 0;
		const run = async () => ({ threadId: "t1", result: ++runs });
		await once(deps, op(undefined, {}), run);
		await once(deps, op(undefined, {}), run);
		expect(runs).toBe(2);
	});

	test("different arguments: an error naming the earlier operation and what differs", async () => {
		const { deps } = setup();
		const run = async () => ({ threadId: "t1", result: "done" });
		await once(deps, op("k", { action: "rename", title: "A" }), run);
		const again = once(deps, op("k", { action: "rename", title: "B" }), run);
		await expect(again).rejects.toThrow(ThreadError);
		await expect(again).rejects.toThrow(
			'idempotency_key "k" was used for a t3_manage of thread t1 at 2026-12-01T03:00:00.000Z with different arguments (title differs).',
		);
	});

	test("a key of a thread now hidden is refused without details", async () => {
		const hidden = new Set<string>();
		const { deps } = setup(hidden);
		const run = async () => ({ threadId: "t1", result: "secret stuff" });
		await once(deps, op("k", { action: "archive" }), run);
		hidden.add("t1");
		const again = once(deps, op("k", { action: "archive" }), run);
		await expect(again).rejects.toThrow(
			'idempotency_key "k" is already used and cannot be used again. Choose a new key for a new operation.',
		);
		const other = once(deps, op("k", { action: "rename" }), run);
		await expect(other).rejects.toThrow("is already used");
	});

	test("a failed operation frees its key", async () => {
		const { deps } = setup();
		const failing = once(deps, op("k", { action: "archive" }), async () => {
			throw new ThreadError("T3 refused");
		});
		await expect(failing).rejects.toThrow("T3 refused");
		const ok = await once(deps, op("k", { action: "rename" }), async () => ({
			threadId: "t1",
			result: "renamed",
		}));
		expect(ok).toBe("renamed");
	});

	test("two calls at once with the same key: one run, both get its result", async () => {
		const { deps } = setup();
		let runs = 0;
		let release = () => {};
		const gate = new Promise<void>((r) => {
			release = r;
		});
		const run = async () => {
			runs++;
			await gate;
			return { threadId: "t1", result: { n: runs } };
		};
		const a = once(deps, op("k", { action: "archive" }), run);
		const b = once(deps, op("k", { action: "archive" }), run);
		release();
		expect(await Promise.all([a, b])).toEqual([{ n: 1 }, { n: 1 }]);
		expect(runs).toBe(1);
	});

	test("an operation that stopped mid-way with its process runs again", async () => {
		const { deps } = setup();
		deps.operations.insert({
			tool: "t3_manage",
			key: "k",
			args: fingerprint({ action: "archive" }),
			thread_id: "t1",
			ref: null,
			created_at: 0,
		});
		const result = await once(
			deps,
			op("k", { action: "archive" }),
			async () => ({
				threadId: "t1",
				result: "finished now",
			}),
		);
		expect(result).toBe("finished now");
	});

	test("fingerprints ignore key order and undefined values", () => {
		expect(fingerprint({ b: 1, a: { d: 2, c: undefined, e: [1] } })).toBe(
			fingerprint({ a: { e: [1], d: 2 }, b: 1, z: undefined }),
		);
	});
});

test("request_id keys stored by an older version become t3_dispatch keys", () => {
	const dir = mkdtempSync(join(tmpdir(), "t3code-mcp-ops-"));
	try {
		const path = join(dir, "state.sqlite");
		let db = openDb(path);
		// Back to the schema before the operations table, with a key in the old column.
		db.exec(
			"DROP TABLE operations; ALTER TABLE threads DROP COLUMN project_title; ALTER TABLE threads DROP COLUMN project_path; PRAGMA user_version = 5",
		);
		db.query(
			`INSERT INTO dispatches (command_id, thread_id, machine, kind, message_id, request_id, payload, created_at)
			 VALUES ('c1', 't1', 'demo', 'launch', 'm1', 'old-key', '{}', 7)`,
		).run();
		db.close();
		db = openDb(path);
		const row = createOperationStore(db).get("t3_dispatch", "old-key");
		expect(row).toEqual({
			tool: "t3_dispatch",
			key: "old-key",
			args: null,
			thread_id: "t1",
			ref: "c1",
			result: null,
			created_at: 7,
			machine: null,
			project_id: null,
			project_title: null,
			project_path: null,
		});
		db.close();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
