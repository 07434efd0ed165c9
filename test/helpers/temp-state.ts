/**
 * State files for store tests: each in a fresh temporary directory, with a second, read-only
 * connection that sees only what is committed; closed and removed after each test.
 */
import { Database } from "bun:sqlite";
import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, openDb } from "../../src/store/db.ts";

export interface TempState {
	path: string;
	db: Db;
	/** Another connection, read-only. */
	reader: Database;
}

/** Call at a test file's top level; the returned function opens one state file per call. */
export function tempStates(prefix: string): () => TempState {
	const cleanUps: (() => void)[] = [];
	afterEach(() => {
		for (const cleanUp of cleanUps.splice(0).reverse()) cleanUp();
	});
	return () => {
		const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
		cleanUps.push(() => rmSync(dir, { recursive: true, force: true }));
		const path = join(dir, "state.sqlite");
		const db = openDb(path);
		cleanUps.push(() => db.close());
		const reader = new Database(path, { readonly: true });
		cleanUps.push(() => reader.close());
		return { path, db, reader };
	};
}
