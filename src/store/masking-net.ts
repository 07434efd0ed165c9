/**
 * The state file's masking net (CONTRACT.md "HTTP"): every text bound to a statement goes
 * through the secret masking first, so no configured secret reaches the file whatever a caller
 * forgot. Stores mask T3's texts where they know them (titles, paths, event bodies); this is
 * for what they pass along without looking, such as the attachment references T3 answers with,
 * stored with their dispatch for a retry. A JSON text is masked value by value (a secret in it
 * may be escaped); lookups are masked the same way, so a masked row is still found by the value
 * it was written with.
 */
import type { Database, Statement } from "bun:sqlite";
import { maskJsonText, maskSecrets } from "../util/redact.ts";

const BOUND = ["run", "get", "all", "values", "iterate"] as const;

function maskText(text: string): string {
	const first = text.charCodeAt(0);
	// `{` or `[`: a JSON document (a payload, a body, a result).
	return first === 123 || first === 91 ? maskJsonText(text) : maskSecrets(text);
}

function maskParam(value: unknown): unknown {
	if (typeof value === "string") return maskText(value);
	if (
		value === null ||
		typeof value !== "object" ||
		ArrayBuffer.isView(value) ||
		value instanceof ArrayBuffer
	)
		return value;
	// Positional parameters as one array: `run([a, b])`.
	if (Array.isArray(value))
		return value.map((v) => (typeof v === "string" ? maskText(v) : v));
	// Named parameters: `{ $id: …, name: … }`.
	const out: Record<string, unknown> = {};
	for (const [key, v] of Object.entries(value))
		out[key] = typeof v === "string" ? maskText(v) : v;
	return out;
}

function masked<S extends Statement>(statement: S): S {
	for (const name of BOUND) {
		const bound = (statement[name] as (...args: unknown[]) => unknown).bind(
			statement,
		);
		Object.defineProperty(statement, name, {
			value: (...args: unknown[]) => bound(...args.map(maskParam)),
			configurable: true,
		});
	}
	return statement;
}

/** Makes every statement of `db` (from `query` and `prepare`) mask what is bound to it. */
export function maskBoundTexts(db: Database): void {
	const query = db.query.bind(db);
	const prepare = db.prepare.bind(db);
	// `query` caches its statements: each is made masking once.
	const seen = new WeakSet<Statement>();
	db.query = ((sql: string) => {
		const statement = query(sql);
		if (!seen.has(statement)) {
			seen.add(statement);
			masked(statement);
		}
		return statement;
	}) as Database["query"];
	db.prepare = ((sql: string, ...params: unknown[]) =>
		masked(
			(prepare as (sql: string, ...p: unknown[]) => Statement)(sql, ...params),
		)) as Database["prepare"];
	// `run` (and its alias `exec`) binds values too: `db.run("INSERT … (?)", [text])`.
	const run = db.run.bind(db) as (sql: string, ...p: unknown[]) => unknown;
	const runMasked = ((sql: string, ...params: unknown[]) =>
		run(sql, ...params.map(maskParam))) as Database["run"];
	db.run = runMasked;
	db.exec = runMasked;
}
