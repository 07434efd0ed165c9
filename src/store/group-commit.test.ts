import { Database } from "bun:sqlite";
import { afterEach, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, openDb } from "./db.ts";
import { createGroupCommit } from "./group-commit.ts";

let dir: string;
let db: Db;
let other: Database;
afterEach(() => {
	other?.close();
	db?.close();
	rmSync(dir, { recursive: true, force: true });
});

function setup() {
	dir = mkdtempSync(join(tmpdir(), "group-commit-"));
	const path = join(dir, "state.sqlite");
	db = openDb(path);
	db.exec("CREATE TABLE t (v TEXT NOT NULL UNIQUE)");
	// Another connection sees only what is committed.
	other = new Database(path, { readonly: true });
	const flushes: (() => void)[] = [];
	const commits = createGroupCommit(db, (flush) => flushes.push(flush));
	const insert = (v: string) => () =>
		db.query("INSERT INTO t (v) VALUES ($v)").run({ v });
	const committed = () =>
		(other.query("SELECT v FROM t ORDER BY v").all() as { v: string }[]).map(
			(r) => r.v,
		);
	return { commits, flushes, insert, committed };
}

describe("group commit", () => {
	it("commits the writes of one turn together, once, and settles them after the commit", async () => {
		const { commits, flushes, insert, committed } = setup();
		const seenByOthers: string[][] = [];
		const a = commits.run(insert("a"));
		const b = commits.run(() => {
			// Inside the same transaction as "a": nobody else sees "a" yet.
			seenByOthers.push(committed());
			return insert("b")();
		});
		expect(flushes).toHaveLength(1);
		expect(committed()).toEqual([]);
		flushes[0]?.();
		await Promise.all([a, b]);
		expect(seenByOthers).toEqual([[]]);
		expect(committed()).toEqual(["a", "b"]);
		// The next write opens the next batch.
		const c = commits.run(insert("c"));
		expect(flushes).toHaveLength(2);
		flushes[1]?.();
		await c;
		expect(committed()).toEqual(["a", "b", "c"]);
	});

	it("a failing write is undone and rejected alone; the rest of the batch commits", async () => {
		const { commits, flushes, insert, committed } = setup();
		const a = commits.run(insert("a"));
		const dup = commits.run(() => {
			insert("x")();
			insert("a")(); // UNIQUE: fails after writing "x"
		});
		const c = commits.run(() => "ok");
		flushes[0]?.();
		await a;
		await expect(dup).rejects.toThrow(/UNIQUE/);
		expect(await c).toBe("ok");
		expect(committed()).toEqual(["a"]);
	});

	it("commits a batch of only non-durable writes without an fsync (synchronous NORMAL), and any durable write makes it FULL", async () => {
		const { commits, flushes, insert, committed } = setup();
		const level = () =>
			(db.query("PRAGMA synchronous").get() as { synchronous: number })
				.synchronous;
		const FULL = 2;
		const NORMAL = 1;
		const seen: number[] = [];
		const mark = commits.run(
			() => {
				seen.push(level());
				insert("mark")();
			},
			{ durable: false },
		);
		flushes[0]?.();
		await mark;
		expect(level()).toBe(FULL);
		const relaxed = commits.run(() => seen.push(level()), { durable: false });
		const durable = commits.run(insert("row"));
		flushes[1]?.();
		await Promise.all([relaxed, durable]);
		expect(seen).toEqual([NORMAL, FULL]);
		expect(level()).toBe(FULL);
		expect(committed()).toEqual(["mark", "row"]);
	});
});
