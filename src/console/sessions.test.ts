import { describe, expect, it } from "bun:test";
import type { AppConfig, ClientConfig } from "../config/types.ts";
import { openDb } from "../store/db.ts";
import { createSessionStore, csrfOf, sessionHash } from "./sessions.ts";

const client = (name: string, token: string): ClientConfig => ({
	name,
	tokenEnv: `${name.toUpperCase()}_TOKEN`,
	tokenFile: null,
	token,
	access: "read-only",
	machines: ["*"],
	projects: ["*"],
	approve: false,
	maxActiveRuns: null,
});

const configWith = (clients: ClientConfig[], token?: string) =>
	({ clients, server: { token } }) as unknown as AppConfig;

describe("console sessions", () => {
	it("keeps only the SHA-256 of the id; finds the session as its client is now", () => {
		let now = 1_000;
		const db = openDb(":memory:");
		const sessions = createSessionStore(db, () => now);
		const boss = client("boss", "boss-token-0123456789");
		const made = sessions.create(boss, 12);
		expect(made.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
		const stored = db
			.query<{ id_hash: string; client: string }, []>(
				"SELECT id_hash, client FROM console_sessions",
			)
			.all();
		expect(stored).toEqual([{ id_hash: sessionHash(made.id), client: "boss" }]);
		expect(
			JSON.stringify(db.query("SELECT * FROM console_sessions").all()),
		).not.toContain(made.id);
		// The rights as configured now: another object of the same client, same token.
		const now1 = { ...boss, access: "full-access" as const };
		const found = sessions.find(made.id, configWith([now1]));
		expect(found?.client).toBe(now1);
		expect(found?.csrf).toBe(csrfOf(made.id));
		expect(sessions.create(boss, 12).csrf).not.toBe(made.csrf);
		now += 12 * 3_600_000;
		expect(sessions.find(made.id, configWith([boss]))).toBeUndefined();
	});

	it("ends with sign-out, a removed client or a changed token", () => {
		const sessions = createSessionStore(openDb(":memory:"), () => 0);
		const boss = client("boss", "boss-token-0123456789");
		const a = sessions.create(boss, 1);
		sessions.end(a.id);
		expect(sessions.find(a.id, configWith([boss]))).toBeUndefined();

		const b = sessions.create(boss, 1);
		expect(sessions.stillValid(b, configWith([boss]))).toBe(true);
		expect(sessions.stillValid(b, configWith([]))).toBe(false);
		const rotated = client("boss", "boss-token-rotated-000");
		expect(sessions.stillValid(b, configWith([rotated]))).toBe(false);
		expect(sessions.find(b.id, configWith([rotated]))).toBeUndefined();
		// Once ended it stays ended, even with the old token back.
		expect(sessions.find(b.id, configWith([boss]))).toBeUndefined();
	});

	it("refuses ids that cannot be ours before any lookup", () => {
		const sessions = createSessionStore(openDb(":memory:"), () => 0);
		expect(sessions.find(undefined, configWith([]))).toBeUndefined();
		expect(sessions.find("x", configWith([]))).toBeUndefined();
		expect(sessions.find("' OR 1=1 --", configWith([]))).toBeUndefined();
	});
});
