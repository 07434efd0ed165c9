import type { SQLQueryBindings } from "bun:sqlite";
import { afterEach, describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { clearSecretsForTest, MASK, registerSecrets } from "../util/redact.ts";
import { openDb } from "./db.ts";

afterEach(clearSecretsForTest);

const SECRET = "tok-9f8e7d6c5b4a3210";

describe("the state file's masking net", () => {
	it("masks a secret in any text bound to a statement, JSON value by value, and finds the row by the raw value", () => {
		registerSecrets([SECRET]);
		const db = openDb(":memory:");
		db.exec("CREATE TABLE t (k TEXT, v TEXT) STRICT");
		db.query("INSERT INTO t (k, v) VALUES ($k, $v)").run({
			k: `key ${SECRET}`,
			v: JSON.stringify({ name: `a "${SECRET}" b`, n: 1 }),
		});
		db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run("plain", SECRET);
		const rows = db.query("SELECT k, v FROM t").all() as {
			k: string;
			v: string;
		}[];
		expect(rows).toEqual([
			{ k: `key ${MASK}`, v: JSON.stringify({ name: `a "${MASK}" b`, n: 1 }) },
			{ k: "plain", v: MASK },
		]);
		expect(
			db.query("SELECT v FROM t WHERE k = ?").get(`key ${SECRET}`),
		).toEqual({ v: JSON.stringify({ name: `a "${MASK}" b`, n: 1 }) });
		db.close();
	});

	it("leaves texts without a secret, numbers and bytes as they are", () => {
		registerSecrets([SECRET]);
		const db = openDb(":memory:");
		db.exec("CREATE TABLE t (s TEXT, n INTEGER, b BLOB) STRICT");
		const bytes = new Uint8Array([1, 2, 3]);
		db.query("INSERT INTO t VALUES (?, ?, ?)").run("{not json", 7, bytes);
		expect(db.query("SELECT s, n, b FROM t").get()).toEqual({
			s: "{not json",
			n: 7,
			b: bytes,
		});
		db.close();
	});

	it("masks what is bound as one array, and what `run` and `exec` bind", () => {
		registerSecrets([SECRET]);
		const db = openDb(":memory:");
		db.exec("CREATE TABLE t (k TEXT, v TEXT) STRICT");
		// bun:sqlite takes positional values as one array too; its Statement types do not say so.
		const positional = [`a ${SECRET}`, "kept"] as unknown as SQLQueryBindings;
		db.query("INSERT INTO t VALUES (?, ?)").run(positional);
		db.run("INSERT INTO t VALUES (?, ?)", ["b", `[1, "${SECRET}"]`]);
		db.exec("INSERT INTO t VALUES (?, ?)", ["c", SECRET]);
		expect(db.query("SELECT k, v FROM t").values()).toEqual([
			[`a ${MASK}`, "kept"],
			["b", `[1,"${MASK}"]`],
			["c", MASK],
		]);
		db.close();
	});

	it("is on every writable connection: only openDb opens the state file for writing", () => {
		const src = join(import.meta.dir, "..");
		const opened: string[] = [];
		const walk = (dir: string) => {
			for (const e of readdirSync(dir, { withFileTypes: true })) {
				const path = join(dir, e.name);
				if (e.isDirectory()) walk(path);
				else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
					for (const m of readFileSync(path, "utf8").matchAll(
						/new Database\(([^)]*)\)/g,
					))
						if (!m[1]?.includes("readonly: true"))
							opened.push(path.slice(src.length + 1));
			}
		};
		walk(src);
		expect(opened).toEqual(["store/db.ts"]);
	});
});
