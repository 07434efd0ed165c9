/**
 * A state file from before every T3 text was masked (CONTRACT.md "HTTP"): the server starting
 * on it masks what it holds once, with the secrets of its configuration, before anything is
 * shown or sent. The pending event it held is delivered masked, the watched thread's stored
 * title is shown masked, and the file's bytes no longer hold the secret.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MASK_MIGRATION, openDb } from "../../src/store/db.ts";
import { MASK } from "../../src/util/redact.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { callTool, type Stack, startStack, until } from "../helpers/stack.ts";

const SECRET = "Rk4Tm-Vx8Qn2Lp6Wz0Hb3Jd7Fc1Ys5Ga9";
let dir: string;
let statePath: string;
let receiver: Receiver;
let stack: Stack;

function fileBytes(): string {
	let out = readFileSync(statePath).toString("latin1");
	if (existsSync(`${statePath}-wal`))
		out += readFileSync(`${statePath}-wal`).toString("latin1");
	return out;
}

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-old-state-"));
	statePath = join(dir, "state.sqlite");
	// The file as an older version left it: a watched thread and a pending event, as T3 sent them.
	const old = openDb(statePath);
	old.exec(`INSERT INTO threads (thread_id, machine, project_id, project_title, project_path, title, created_at, updated_at)
		VALUES ('t-old', 'demo', 'p-old', 'demo', '/srv/t3/demo', 'old title ${SECRET}', 1, 1)`);
	const body = JSON.stringify({
		id: "evt_old",
		type: "thread.completed",
		thread_id: "t-old",
		title: `old title ${SECRET}`,
		message: `it said ${SECRET}`,
	});
	old.exec(`INSERT INTO events (id, thread_id, thread_seq, dedupe_key, type, body, status, next_attempt_at, created_at)
		VALUES ('evt_old', 't-old', 1, 'k', 'thread.completed', '${body}', 'pending', 0, ${Date.now()})`);
	old.exec(`PRAGMA user_version = ${MASK_MIGRATION}`);
	old.close();
	expect(fileBytes()).toContain(SECRET);

	receiver = startReceiver();
	stack = await startStack({
		statePath,
		machines: [{ name: "demo", token: SECRET, sim: { token: SECRET } }],
		server: { hookUrl: receiver.url },
	});
});
afterAll(async () => {
	await stack.stop();
	await receiver.stop();
	rmSync(dir, { recursive: true, force: true });
});

test("the old pending event is delivered masked", async () => {
	await until(
		() => receiver.deliveries.some((d) => d.body.id === "evt_old"),
		10_000,
		"the old event delivered",
	);
	const old = receiver.deliveries.find((d) => d.body.id === "evt_old");
	expect(old?.body.message).toBe(`it said ${MASK}`);
	expect(old?.raw).not.toContain(SECRET);
});

test("the stored title is shown masked, and the file no longer holds the secret", async () => {
	const client = await stack.client();
	const watch = await callTool(client, "t3_watch");
	expect(watch.text).toContain(`"title":"old title ${MASK}"`);
	expect(watch.text).not.toContain(SECRET);
	expect(fileBytes()).not.toContain(SECRET);
	expect(fileBytes()).not.toContain(SECRET.slice(0, 8));
});
