import { describe, expect, it } from "bun:test";
import { statSync } from "node:fs";
import { tempStates } from "../../test/helpers/temp-state.ts";
import { openDb } from "./db.ts";
import { createGroupCommit, walSync } from "./group-commit.ts";

const tempState = tempStates("group-commit");

function setup() {
	const { path, db, reader } = tempState();
	db.exec("CREATE TABLE t (v TEXT NOT NULL UNIQUE)");
	const flushes: (() => void)[] = [];
	const commits = createGroupCommit(db, (flush) => flushes.push(flush));
	const insert = (v: string) => () =>
		db.query("INSERT INTO t (v) VALUES ($v)").run({ v });
	const committed = () =>
		// Another connection sees only what is committed.
		(reader.query("SELECT v FROM t ORDER BY v").all() as { v: string }[]).map(
			(r) => r.v,
		);
	return { path, db, commits, flushes, insert, committed };
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
		const { db, commits, flushes, insert, committed } = setup();
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

	it("with a WAL to sync, commits without the fsync and settles after the sync, off the event loop; readers wait meanwhile", async () => {
		const { db, insert, committed } = setup();
		const syncs: { resolve: () => void; reject: (e: Error) => void }[] = [];
		const flushes: (() => void)[] = [];
		const commits = createGroupCommit(db, (flush) => flushes.push(flush), {
			sync: () =>
				new Promise<void>((resolve, reject) => syncs.push({ resolve, reject })),
			close: () => {},
		});
		const level = () =>
			(db.query("PRAGMA synchronous").get() as { synchronous: number })
				.synchronous;
		let settled = false;
		const a = commits
			.run(() => {
				expect(level()).toBe(1); // NORMAL: no fsync inside the commit
				return insert("a")();
			})
			.then(() => {
				settled = true;
			});
		expect(commits.unsynced()).toBeUndefined();
		flushes[0]?.();
		// Committed (another connection sees it) but not synced: not settled, readers wait.
		expect(committed()).toEqual(["a"]);
		expect(level()).toBe(2);
		expect(syncs).toHaveLength(1);
		const gate = commits.unsynced();
		expect(gate).toBeDefined();
		await Promise.resolve();
		expect(settled).toBe(false);
		syncs[0]?.resolve();
		await a;
		await gate;
		expect(commits.unsynced()).toBeUndefined();

		// A failed sync rejects its writes and keeps readers waiting until a later sync succeeds.
		const b = commits.run(insert("b"));
		flushes[1]?.();
		syncs[1]?.reject(new Error("EIO"));
		await expect(b).rejects.toThrow("EIO");
		const stillWaiting = commits.unsynced();
		expect(stillWaiting).toBeDefined();
		const c = commits.run(insert("c"));
		flushes[2]?.();
		syncs[2]?.resolve();
		await c;
		await stillWaiting;
		expect(commits.unsynced()).toBeUndefined();
		await commits.drained();
	});

	it("readers wait only for the syncs of rows committed before they asked, not for later ones", async () => {
		const { db, insert } = setup();
		const syncs: { resolve: () => void }[] = [];
		const flushes: (() => void)[] = [];
		const commits = createGroupCommit(db, (flush) => flushes.push(flush), {
			sync: () => new Promise<void>((resolve) => syncs.push({ resolve })),
			close: () => {},
		});
		const a = commits.run(insert("a"));
		flushes[0]?.();
		const gate = commits.unsynced();
		let open = false;
		void gate?.then(() => {
			open = true;
		});
		// Under load the next batch commits (and starts its sync) before the first sync ends.
		const b = commits.run(insert("b"));
		flushes[1]?.();
		expect(syncs).toHaveLength(2);
		syncs[0]?.resolve();
		await a;
		await gate;
		expect(open).toBe(true);
		// "b" is still being synced: a reader asking now waits for it.
		const later = commits.unsynced();
		expect(later).toBeDefined();
		syncs[1]?.resolve();
		await b;
		await later;
		expect(commits.unsynced()).toBeUndefined();
		await commits.drained();
	});

	it("with a WAL to sync, checkpoints after the sync has settled the writes, never inside their commit", async () => {
		const { path, db, insert, committed } = setup();
		const flushes: (() => void)[] = [];
		const wal = walSync(db);
		const commits = createGroupCommit(db, (flush) => flushes.push(flush), wal);
		const dbBytes = () => statSync(path).size;
		const before = dbBytes();
		// Well over sqlite's automatic checkpoint (1 000 pages), in one batch.
		const big = commits.run(() => {
			for (let i = 0; i < 1_500; i++) insert(`${i}:${"x".repeat(4_000)}`)();
		});
		flushes[0]?.();
		// Committed, and no checkpoint copied the pages into the database file meanwhile.
		expect(committed()).toHaveLength(1_500);
		expect(dbBytes()).toBe(before);
		await big;
		await new Promise((resolve) => setTimeout(resolve, 5));
		// Then checkpointed: the pages are in the database file.
		expect(dbBytes()).toBeGreaterThan(before + 1_500 * 4_000);
		await commits.drained();
		commits.close?.();
		wal?.close();
	});

	it("walSync syncs a file database's WAL and is absent for one in memory", async () => {
		const { db, insert, committed } = setup();
		const wal = walSync(db);
		expect(wal).toBeDefined();
		const commits = createGroupCommit(db, undefined, wal);
		await commits.run(insert("a"));
		expect(committed()).toEqual(["a"]);
		await commits.drained();
		wal?.close();
		const memory = openDb(":memory:");
		expect(walSync(memory)).toBeUndefined();
		memory.close();
	});
});
