import { afterEach, describe, expect, it } from "bun:test";
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
});
