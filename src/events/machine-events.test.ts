/**
 * Machine events against a real (in-memory) state database and a manual clock: when each
 * warning falls due, one `machine.unauthorized` per transition, and nothing raised twice by a
 * second instance on the same database (a restart).
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { fakeFleetOf } from "../../test/helpers/fake-machine.ts";
import { createMetrics } from "../metrics/metrics.ts";
import { type Db, openDb } from "../store/db.ts";
import { immediateCommit } from "../store/group-commit.ts";
import { createMachineAlertStore } from "../store/machine-alerts.ts";
import { createOutbox } from "../store/outbox.ts";
import type { MachineStatus } from "../t3/machine-api.ts";
import { createManualClock } from "../util/clock.ts";
import { silentLogger } from "../util/log.ts";
import {
	createMachineEvents,
	dueWarning,
	type MachineEventBody,
	type MachineEvents,
	machineEventKey,
} from "./machine-events.ts";

const HOUR = 3600_000;
const DAY = 24 * HOUR;

let db: Db;
let clock: ReturnType<typeof createManualClock>;
let status: MachineStatus;
let running: MachineEvents[];
let fake: ReturnType<typeof fakeFleetOf>;

beforeEach(() => {
	db = openDb(":memory:");
	clock = createManualClock();
	status = {
		state: "connecting",
		reason: null,
		serverVersion: null,
		lastEventAt: null,
	};
	fake = fakeFleetOf({ status: () => ({ ...status }) });
	running = [];
});
afterEach(async () => {
	for (const events of running) await events.stop();
	db.close();
});

/** A machine-events instance on the shared database (a second one is a restart). */
function start(): MachineEvents {
	const events = createMachineEvents({
		fleet: fake.fleet,
		outbox: createOutbox(db),
		alerts: createMachineAlertStore(db),
		commits: immediateCommit,
		clock,
		metrics: createMetrics(),
		log: silentLogger,
		onEmitted: () => {},
	});
	events.start();
	running.push(events);
	return events;
}

async function restart(): Promise<void> {
	await running.pop()?.stop();
	start();
}

function set(next: Partial<MachineStatus>): void {
	status = { ...status, ...next };
	fake.emit({ kind: "state", status: { ...status } });
}

async function rows(): Promise<
	(MachineEventBody & { seq: number; origin: string | null })[]
> {
	for (const events of running) await events.idle();
	return createOutbox(db)
		.forThread(machineEventKey("m"))
		.map((r) => ({
			seq: r.thread_seq,
			origin: r.origin,
			...(JSON.parse(r.body) as MachineEventBody),
		}));
}

test("the warning due: the shortest lead time reached, none before 7 days or after expiry", () => {
	const now = Date.UTC(2026, 0, 1);
	const at = (ms: number) => new Date(now + ms).toISOString();
	expect(dueWarning(at(8 * DAY), now)).toBeNull();
	expect(dueWarning(at(7 * DAY), now)).toBe(7 * DAY);
	expect(dueWarning(at(6 * DAY), now)).toBe(7 * DAY);
	expect(dueWarning(at(DAY), now)).toBe(DAY);
	expect(dueWarning(at(HOUR), now)).toBe(DAY);
	expect(dueWarning(at(0), now)).toBeNull();
	expect(dueWarning(at(-DAY), now)).toBeNull();
	expect(dueWarning("not a time", now)).toBeNull();
});

test("unauthorized: once per transition, again only after the machine was online", async () => {
	start();
	set({ state: "unauthorized", reason: 'T3 machine "m": token rejected' });
	// A retry with other words, and a spell offline, are no new transition.
	set({
		state: "unauthorized",
		reason: 'T3 machine "m": token rejected again',
	});
	set({ state: "offline", reason: "down" });
	set({ state: "unauthorized", reason: 'T3 machine "m": token rejected' });
	expect(await rows()).toEqual([
		{
			seq: 1,
			origin: null,
			id: expect.stringMatching(/^evt_/),
			type: "machine.unauthorized",
			occurred_at: new Date(clock.now()).toISOString(),
			machine: "m",
			token_expires_at: null,
			reason: 'T3 machine "m": token rejected',
		},
	]);
	await restart();
	expect(await rows()).toHaveLength(1);
	set({ state: "online", reason: null });
	set({
		state: "unauthorized",
		reason: 'T3 machine "m": token expired at 2026-11-29T12:00:00.000Z',
		tokenExpiresAt: "2026-11-29T12:00:00.000Z",
	});
	const all = await rows();
	expect(all.map((r) => [r.seq, r.type, r.token_expires_at])).toEqual([
		[1, "machine.unauthorized", null],
		[2, "machine.unauthorized", "2026-11-29T12:00:00.000Z"],
	]);
});

test("recovery is remembered too: online before a restart, refused after it, is a new event", async () => {
	start();
	set({ state: "unauthorized", reason: "refused" });
	set({ state: "online", reason: null });
	await restart();
	set({ state: "unauthorized", reason: "refused" });
	expect((await rows()).map((r) => r.type)).toEqual([
		"machine.unauthorized",
		"machine.unauthorized",
	]);
});

test("token_expiring: 7 days and 1 day before, once each, across restarts, as the clock moves", async () => {
	const expiresAt = new Date(clock.now() + 6 * DAY).toISOString();
	start();
	set({ state: "online", reason: null, tokenExpiresAt: expiresAt });
	set({ state: "offline", reason: "down" });
	set({ state: "online", reason: null });
	await restart();
	expect(await rows()).toEqual([
		{
			seq: 1,
			origin: null,
			id: expect.stringMatching(/^evt_/),
			type: "machine.token_expiring",
			occurred_at: new Date(clock.now()).toISOString(),
			machine: "m",
			token_expires_at: expiresAt,
			reason: `T3 machine "m" (http://127.0.0.1:1): token expires at ${expiresAt}, in 6 days; mint a new one (\`t3code-mcp pair\`, or \`t3 auth session issue\`)`,
		},
	]);
	// Nothing else falls due until a day before: the next check is that time, or within the hour.
	clock.advance(5 * DAY - HOUR);
	expect(await rows()).toHaveLength(1);
	clock.advance(2 * HOUR);
	const [, second] = await rows();
	// Raised by the check timed for that moment.
	expect(second).toMatchObject({
		seq: 2,
		type: "machine.token_expiring",
		occurred_at: new Date(Date.parse(expiresAt) - DAY).toISOString(),
		token_expires_at: expiresAt,
		reason: expect.stringContaining(`${expiresAt}, in 24 hours;`),
	});
	await restart();
	clock.advance(DAY);
	expect(await rows()).toHaveLength(2);
	// Expired: no timers are left behind for it.
	await running.pop()?.stop();
	expect(clock.pending()).toBe(0);
});

test("a token first seen a few hours before its expiry gets the 1-day warning only; a new token is warned afresh", async () => {
	start();
	set({
		state: "online",
		reason: null,
		tokenExpiresAt: new Date(clock.now() + 5 * HOUR).toISOString(),
	});
	set({
		state: "offline",
		reason: "re-pairing",
		tokenExpiresAt: new Date(clock.now() + 30 * DAY).toISOString(),
	});
	set({ state: "online", reason: null });
	clock.advance(23 * DAY);
	expect(
		(await rows()).map((r) => [
			r.type,
			Date.parse(String(r.token_expires_at)) -
				Date.parse(String(r.occurred_at)),
		]),
	).toEqual([
		["machine.token_expiring", 5 * HOUR],
		["machine.token_expiring", 7 * DAY],
	]);
});

test("an unauthorized machine is not warned about its expiry", async () => {
	start();
	set({
		state: "unauthorized",
		reason: "refused",
		tokenExpiresAt: new Date(clock.now() + 6 * DAY).toISOString(),
	});
	expect((await rows()).map((r) => r.type)).toEqual(["machine.unauthorized"]);
	expect(clock.pending()).toBe(0);
});
