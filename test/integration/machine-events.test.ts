/**
 * Machine events end to end (issue 26 item 10): the real server over the official MCP client,
 * simulated T3 machines over real sockets and a loopback webhook receiver that verifies Standard
 * Webhooks signatures. A machine whose token T3 refuses raises `machine.unauthorized` once per
 * transition, not again after a restart; a token expiring in 6 days raises
 * `machine.token_expiring` once, not again after a restart on the same state file, and the
 * second one when the (injected) clock reaches a day before the expiry.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createManualClock } from "../../src/util/clock.ts";
import {
	type Delivery,
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilMachineOnline,
} from "../helpers/stack.ts";

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const MINT = "mint a new one (`t3code-mcp pair`, or `t3 auth session issue`)";

const machineEvents = (receiver: Receiver, machine: string): Delivery[] =>
	receiver.deliveries.filter(
		(d) =>
			d.body.machine === machine && String(d.body.type).startsWith("machine."),
	);

/** The machine's rows in the outbox once every machine event under way is written. */
async function outboxRows(stack: Stack, machine: string) {
	const { events } = stack.server.services;
	await events.machines.idle();
	return events.outbox.forThread(`machine/${machine}`).map((r) => r.type);
}

async function stateOf(
	stack: Stack,
	name: string,
): Promise<string | undefined> {
	const client = await stack.client();
	const { data } = await callTool<{
		machines: { name: string; state: string }[];
	}>(client, "t3_machines");
	return data.machines.find((m) => m.name === name)?.state;
}

async function untilState(stack: Stack, name: string, state: string) {
	await until(
		async () => (await stateOf(stack, name)) === state,
		10_000,
		`${name} ${state}`,
	);
}

describe("machine.unauthorized", () => {
	let receiver: Receiver;
	let stack: Stack;

	beforeAll(async () => {
		receiver = startReceiver();
		stack = await startStack({
			machines: [
				{ name: "refused", token: "refused-token-value-123" },
				{ name: "lab" },
			],
			server: {
				hookUrl: receiver.url,
				hookToken: "hook-bearer",
				hookSecret: TEST_SECRET,
			},
		});
	});
	afterAll(async () => {
		await stack.stop();
		await receiver.stop();
	});

	test("a token T3 refuses: one signed event, no conversation origin, the contract body", async () => {
		await until(
			() => machineEvents(receiver, "refused").length === 1,
			10_000,
			"machine.unauthorized",
		);
		const [delivery] = machineEvents(receiver, "refused") as [Delivery];
		const url = stack.sim("refused").url;
		expect(delivery.verified).toBe(true);
		expect(delivery.headers.authorization).toBe("Bearer hook-bearer");
		expect(delivery.headers["webhook-id"]).toBe(String(delivery.body.id));
		expect(delivery.headers["x-conversation-origin"]).toBeUndefined();
		expect(delivery.body).toEqual({
			id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
			type: "machine.unauthorized",
			occurred_at: expect.any(String),
			machine: "refused",
			token_expires_at: null,
			reason: `T3 machine "refused" (${url}): token rejected by ${url} (expired, revoked or for another server); ${MINT}`,
		});
		expect(new Date(String(delivery.body.occurred_at)).toISOString()).toBe(
			String(delivery.body.occurred_at),
		);
		expect(delivery.raw).not.toContain("refused-token-value-123");
		const headers = Object.keys(delivery.headers)
			.filter(
				(h) =>
					![
						"host",
						"connection",
						"accept",
						"accept-encoding",
						"content-length",
					].includes(h),
			)
			.sort();
		expect({
			body: {
				...delivery.body,
				id: "evt_…",
				occurred_at: "…",
				reason: String(delivery.body.reason).replaceAll(url, "<url>"),
			},
			headers,
		}).toMatchSnapshot();
	});

	test("once per transition: not again after a restart while refused; again after it was online", async () => {
		const sim = stack.sim("lab");
		await untilMachineOnline(await stack.client(), "lab");
		sim.revokeToken(sim.token);
		sim.dropSockets();
		await until(
			() => machineEvents(receiver, "lab").length === 1,
			10_000,
			"lab's machine.unauthorized",
		);
		expect(machineEvents(receiver, "lab")[0]?.body).toMatchObject({
			type: "machine.unauthorized",
			machine: "lab",
			reason: expect.stringContaining("token rejected"),
		});

		// Restarted on the same state file while both tokens are still refused: nothing new.
		await stack.restartServer();
		await untilState(stack, "lab", "unauthorized");
		await untilState(stack, "refused", "unauthorized");
		expect(await outboxRows(stack, "lab")).toEqual(["machine.unauthorized"]);
		expect(await outboxRows(stack, "refused")).toEqual([
			"machine.unauthorized",
		]);

		// The token works again (seen online), then is refused again: a new transition.
		sim.restoreToken(sim.token);
		await stack.restartServer();
		await untilMachineOnline(await stack.client(), "lab");
		sim.revokeToken(sim.token);
		sim.dropSockets();
		await until(
			() => machineEvents(receiver, "lab").length === 2,
			10_000,
			"the second machine.unauthorized",
		);
		const [first, second] = machineEvents(receiver, "lab") as [
			Delivery,
			Delivery,
		];
		expect(second.body.id).not.toBe(first.body.id);
		expect(second.verified).toBe(true);
		expect(machineEvents(receiver, "refused")).toHaveLength(1);
	});

	test("a machine no longer configured: its waiting event is held, not sent", async () => {
		const sim = stack.sim("lab");
		sim.restoreToken(sim.token);
		await stack.restartServer();
		await untilMachineOnline(await stack.client(), "lab");
		receiver.setMode({ status: 503 });
		const before = receiver.attempts();
		sim.revokeToken(sim.token);
		sim.dropSockets();
		await until(() => receiver.attempts() > before, 10_000, "a refused POST");
		await stack.restartServer((config) => {
			config.machines = config.machines.filter((m) => m.name !== "lab");
		});
		receiver.setMode("ok");
		const health = (await (
			await fetch(`${stack.server.url}/healthz`)
		).json()) as { outbox: { pending: number; held: number } };
		expect(health.outbox).toMatchObject({ pending: 0, held: 1 });
		expect(
			stack.server.services.events.outbox
				.forThread("machine/lab")
				.map((r) => r.status),
		).toEqual(["delivered", "delivered", "held"]);
	});
});

describe("machine.token_expiring", () => {
	const token = "lab-expiring-token-0123456789";
	const start = Date.now();
	const expiresAt = new Date(start + 6 * DAY).toISOString();
	const clock = createManualClock(start);
	let receiver: Receiver;
	let stack: Stack;

	beforeAll(async () => {
		receiver = startReceiver();
		stack = await startStack({
			machines: [
				{
					name: "lab",
					token,
					sim: {
						tokens: [
							{
								token,
								scopes: ["orchestration:read", "orchestration:operate"],
								expiresAt,
							},
						],
					},
				},
			],
			server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
			clock,
		});
	});
	afterAll(async () => {
		await stack.stop();
		await receiver.stop();
	});

	test("6 days before: one event; none again after a restart on the same state file", async () => {
		await until(
			() => machineEvents(receiver, "lab").length === 1,
			10_000,
			"machine.token_expiring",
		);
		const [delivery] = machineEvents(receiver, "lab") as [Delivery];
		const url = stack.sim("lab").url;
		expect(delivery.verified).toBe(true);
		expect(delivery.headers["x-conversation-origin"]).toBeUndefined();
		expect(delivery.body).toEqual({
			id: expect.stringMatching(/^evt_/),
			type: "machine.token_expiring",
			occurred_at: new Date(start).toISOString(),
			machine: "lab",
			token_expires_at: expiresAt,
			reason: `T3 machine "lab" (${url}): token expires at ${expiresAt}, in 6 days; ${MINT}`,
		});
		// The contract's body, pinned (CONTRACT.md "Faithful edges").
		expect({
			...delivery.body,
			id: "evt_…",
			occurred_at: "…",
			token_expires_at: "…",
			reason: String(delivery.body.reason)
				.replaceAll(url, "<url>")
				.replaceAll(expiresAt, "<expires_at>"),
		}).toMatchSnapshot();

		await stack.restartServer();
		await untilMachineOnline(await stack.client(), "lab");
		expect(await outboxRows(stack, "lab")).toEqual(["machine.token_expiring"]);
		expect(machineEvents(receiver, "lab")).toHaveLength(1);
	});

	test("the clock reaching a day before the expiry raises the second, once", async () => {
		clock.advance(5 * DAY - HOUR);
		expect(await outboxRows(stack, "lab")).toHaveLength(1);
		clock.advance(2 * HOUR);
		await until(
			() => machineEvents(receiver, "lab").length === 2,
			10_000,
			"the 1-day machine.token_expiring",
		);
		const second = machineEvents(receiver, "lab")[1] as Delivery;
		expect(second.body).toMatchObject({
			type: "machine.token_expiring",
			occurred_at: new Date(Date.parse(expiresAt) - DAY).toISOString(),
			token_expires_at: expiresAt,
			reason: expect.stringContaining(`${expiresAt}, in 24 hours;`),
		});
		// Signed like every event; checked by hand, as its timestamp is the moved clock's (the
		// receiver's verify allows 5 minutes around real time).
		const timestamp = Number(second.headers["webhook-timestamp"]);
		expect(timestamp * 1000).toBeGreaterThanOrEqual(
			Date.parse(expiresAt) - DAY,
		);
		expect(second.headers["webhook-signature"]).toBe(
			new Webhook(TEST_SECRET).sign(
				String(second.body.id),
				new Date(timestamp * 1000),
				second.raw,
			),
		);

		await stack.restartServer();
		await untilMachineOnline(await stack.client(), "lab");
		clock.advance(HOUR);
		expect(await outboxRows(stack, "lab")).toEqual([
			"machine.token_expiring",
			"machine.token_expiring",
		]);
	});
});
