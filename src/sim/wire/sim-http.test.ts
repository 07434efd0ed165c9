import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { startSim } from "../sim.ts";
import { mintTicket } from "../test-client.ts";
import type { Sim } from "../types.ts";

let sim: Sim;
beforeEach(async () => {
	sim = await startSim({ stepMs: 2, tokens: [{ token: "none", scopes: [] }] });
});
afterEach(() => sim.stop());

const get = (path: string, token?: string, protocolHeader = true) =>
	fetch(`${sim.url}${path}`, {
		headers: {
			...(token ? { authorization: `Bearer ${token}` } : {}),
			...(protocolHeader ? { "x-t3-orchestration-protocol": "2" } : {}),
		},
	});

describe("sim HTTP", () => {
	it("serves the protocol-2 descriptor without auth", async () => {
		const res = await get("/.well-known/t3/environment");
		const body = (await res.json()) as Record<string, unknown>;
		expect(res.status).toBe(200);
		expect(body.orchestrationProtocolVersion).toBe(2);
		expect(body.serverVersion).toBe("0.1.0-sim");
		expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
	});

	it("reports the auth session, always 200", async () => {
		const good = (await (
			await get("/api/auth/session", sim.token)
		).json()) as Record<string, unknown>;
		expect(good).toMatchObject({
			authenticated: true,
			scopes: ["orchestration:read", "orchestration:operate"],
			sessionMethod: "bearer-access-token",
		});
		expect(typeof good.expiresAt).toBe("string");
		const bad = await get("/api/auth/session", "nope");
		expect(bad.status).toBe(200);
		expect(((await bad.json()) as Record<string, unknown>).authenticated).toBe(
			false,
		);
	});

	it("guards the read routes with the tagged errors of PROTOCOL.md §2.7", async () => {
		const missing = await get("/api/orchestration/shell");
		expect(missing.status).toBe(401);
		expect(await missing.json()).toMatchObject({
			_tag: "EnvironmentAuthInvalidError",
			reason: "missing_credential",
		});
		const invalid = await get("/api/orchestration/shell", "nope");
		expect(await invalid.json()).toMatchObject({
			_tag: "EnvironmentAuthInvalidError",
			reason: "invalid_credential",
		});
		const scope = await get("/api/orchestration/shell", "none");
		expect(scope.status).toBe(403);
		expect(await scope.json()).toMatchObject({
			_tag: "EnvironmentScopeRequiredError",
			requiredScope: "orchestration:read",
		});
		const noHeader = await get("/api/orchestration/shell", sim.token, false);
		expect(noHeader.status).toBe(400);
		expect(await noHeader.json()).toMatchObject({
			_tag: "EnvironmentRequestInvalidError",
			code: "invalid_request",
		});
		const unknown = await get(
			"/api/orchestration/threads/thread-nope",
			sim.token,
		);
		expect(unknown.status).toBe(404);
		expect(await unknown.json()).toMatchObject({
			_tag: "EnvironmentResourceNotFoundError",
			reason: "thread_not_found",
		});
		expect((await get("/api/nothing-here", sim.token)).status).toBe(404);
	});

	it("serves the shell snapshot with the default project", async () => {
		const body = (await (
			await get("/api/orchestration/shell", sim.token)
		).json()) as Record<string, unknown>;
		expect(body).toMatchObject({
			schemaVersion: 2,
			snapshotSequence: 1,
			threads: [],
			archivedThreads: [],
		});
		expect(body.projects).toMatchObject([
			{ title: "demo", workspaceRoot: "/srv/t3/demo" },
		]);
	});

	it("gates /ws with 426 before auth, so the ticket survives", async () => {
		const ticket = await mintTicket(sim);
		const res = await fetch(`${sim.url}/ws?wsTicket=${ticket}`);
		expect(res.status).toBe(426);
		expect(await res.json()).toEqual({
			code: "orchestration_protocol_incompatible",
			message:
				"Update this client to one that supports orchestration protocol 2.",
			orchestrationProtocolVersion: 2,
		});
		const ws = new WebSocket(
			`${sim.url.replace("http", "ws")}/ws?wsTicket=${ticket}&orchestrationProtocol=2`,
		);
		await new Promise((resolve, reject) => {
			ws.onopen = resolve;
			ws.onerror = reject;
		});
		ws.close();
	});

	it("refuses a reused ticket and a missing credential on /ws", async () => {
		const ticket = await mintTicket(sim);
		const first = new WebSocket(
			`${sim.url.replace("http", "ws")}/ws?wsTicket=${ticket}&orchestrationProtocol=2`,
		);
		await new Promise((resolve) => {
			first.onopen = resolve;
		});
		first.close();
		const reused = await fetch(
			`${sim.url}/ws?wsTicket=${ticket}&orchestrationProtocol=2`,
		);
		expect(reused.status).toBe(401);
		expect(await reused.json()).toMatchObject({ reason: "invalid_credential" });
		const none = await fetch(`${sim.url}/ws?orchestrationProtocol=2`);
		expect(await none.json()).toMatchObject({ reason: "missing_credential" });
	});

	it("revokes and restores a token", async () => {
		sim.revokeToken(sim.token);
		expect(
			(
				(await (await get("/api/auth/session", sim.token)).json()) as Record<
					string,
					unknown
				>
			).authenticated,
		).toBe(false);
		expect((await get("/api/orchestration/shell", sim.token)).status).toBe(401);
		const mint = await fetch(`${sim.url}/api/auth/websocket-ticket`, {
			method: "POST",
			headers: { authorization: `Bearer ${sim.token}` },
		});
		expect(mint.status).toBe(401);
		sim.restoreToken(sim.token);
		expect((await get("/api/orchestration/shell", sim.token)).status).toBe(200);
	});

	it("delays HTTP responses on request", async () => {
		sim.setDelay(60);
		const started = Date.now();
		await get("/.well-known/t3/environment");
		expect(Date.now() - started).toBeGreaterThanOrEqual(55);
		sim.setDelay(0);
		expect(sim.stats().requests["GET /.well-known/t3/environment"]).toBe(1);
	});
});

describe("sim protocol 1", () => {
	it("looks like a pre-V2 server", async () => {
		const old = await startSim({ protocol: 1 });
		try {
			const descriptor = (await (
				await fetch(`${old.url}/.well-known/t3/environment`)
			).json()) as Record<string, unknown>;
			expect(descriptor.orchestrationProtocolVersion).toBeUndefined();
			const shell = (await (
				await fetch(`${old.url}/api/orchestration/shell`, {
					headers: { authorization: `Bearer ${old.token}` },
				})
			).json()) as Record<string, unknown>;
			expect(shell.schemaVersion).toBeUndefined();
			const ws = new WebSocket(
				`${old.url.replace("http", "ws")}/ws?wsTicket=${await mintTicket(old)}`,
			);
			const exit = await new Promise<Record<string, unknown>>((resolve) => {
				ws.onopen = () =>
					ws.send(
						JSON.stringify({
							_tag: "Request",
							id: "1",
							tag: "orchestration.launchThread",
							payload: {},
							headers: [],
						}),
					);
				ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
			});
			expect(JSON.stringify(exit)).toContain(
				"Unknown request tag: orchestration.launchThread",
			);
			ws.close();
		} finally {
			await old.stop();
		}
	});
});
