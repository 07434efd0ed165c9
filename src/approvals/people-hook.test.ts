/**
 * The people hook's outbox: the raw link exists only while its row is pending; once delivered,
 * or dead, the row's body has the token masked. Log lines never show a link's token.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { testApprovals } from "../../test/helpers/approvals.ts";
import { createMetrics } from "../metrics/metrics.ts";
import { openDb } from "../store/db.ts";
import { createManualClock } from "../util/clock.ts";
import { createLogger, silentLogger } from "../util/log.ts";
import { createPeopleHook } from "./people-hook.ts";
import { linkUrl, newLinkToken } from "./tokens.ts";

const APPROVALS = testApprovals("http://127.0.0.1:9/people");

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const stop of stops.splice(0)) await stop();
});

function hookWith(status: number) {
	const db = openDb(":memory:");
	const clock = createManualClock(1_000_000);
	const bodies: string[] = [];
	const hook = createPeopleHook(
		APPROVALS,
		{ hookSecret: undefined },
		{
			db,
			clock,
			metrics: createMetrics(),
			log: silentLogger,
			// 410 dead-letters at once; 204 delivers.
			fetch: (async (_url: string, init: RequestInit) => {
				bodies.push(String(init.body));
				return new Response(null, { status });
			}) as unknown as typeof fetch,
		},
	);
	hook.delivery.start();
	stops.push(() => hook.delivery.stop());
	const token = newLinkToken();
	hook.emit({
		id: "evt_1",
		thread_id: "t1",
		dedupe_key: "requested:r1",
		type: "approval.requested",
		origin: null,
		body: {
			id: "evt_1",
			type: "approval.requested",
			approval_url: linkUrl("https://t3mcp.example.ts.net", token),
		},
	});
	return { db, hook, token, bodies };
}

const storedBody = (db: ReturnType<typeof openDb>) =>
	db.query("SELECT body, status FROM people_events").get() as {
		body: string;
		status: string;
	};

describe("people hook outbox", () => {
	test("pending rows hold the link; a delivered row has it masked", async () => {
		const { db, hook, token, bodies } = hookWith(204);
		await hook.delivery.idle();
		expect(bodies).toHaveLength(1);
		expect(bodies[0]).toContain(token);
		const row = storedBody(db);
		expect(row.status).toBe("delivered");
		expect(row.body).not.toContain(token);
		expect(row.body).toContain("/a/[redacted]");
	});

	test("a dead row has it masked too", async () => {
		const { db, hook, token } = hookWith(410);
		await hook.delivery.idle();
		const row = storedBody(db);
		expect(row.status).toBe("dead");
		expect(row.body).not.toContain(token);
	});

	test("an event is emitted once per dedupe key", () => {
		const { hook } = hookWith(503);
		expect(
			hook.emit({
				id: "evt_2",
				thread_id: "t1",
				dedupe_key: "requested:r1",
				type: "approval.requested",
				origin: null,
				body: {},
			}),
		).toBe(false);
	});
});

describe("log lines", () => {
	test("mask a link's token wherever it appears", () => {
		const lines: string[] = [];
		const log = createLogger("debug", (line) => lines.push(line));
		const token = newLinkToken();
		log.error("http handler failed", { path: `/a/${token}` });
		log.info(`opened https://t3mcp.example.ts.net/a/${token}`, {
			nested: { url: `http://127.0.0.1:8000/a/${token}?x=1` },
		});
		expect(lines).toHaveLength(2);
		for (const line of lines) {
			expect(line).not.toContain(token);
			expect(line).toContain("/a/[redacted]");
		}
	});
});
