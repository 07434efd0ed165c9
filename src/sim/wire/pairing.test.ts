/**
 * The simulator's `/oauth/token` against the captured exchange (captures-v2
 * http-oauth-token.json): the reply's fields and values, 30-day tokens that `/api/auth/session`
 * accepts with the granted scopes, single use, narrowing only, link expiry, and the 401/400
 * bodies a real server sends.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startSim } from "../index.ts";
import type { Sim } from "../types.ts";

let now = Date.UTC(2026, 10, 29, 19, 9, 51, 797);
let sim: Sim;
beforeAll(async () => {
	sim = await startSim({ now: () => now });
});
afterAll(async () => {
	await sim.stop();
});

function exchange(
	link: string,
	fields: Record<string, string> = {},
): Promise<Response> {
	const credential = new URLSearchParams(new URL(link).hash.slice(1)).get(
		"token",
	);
	return fetch(`${sim.url}/oauth/token`, {
		method: "POST",
		headers: { "content-type": "application/x-www-form-urlencoded" },
		body: new URLSearchParams({
			grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
			subject_token: credential ?? "",
			subject_token_type:
				"urn:t3:params:oauth:token-type:environment-bootstrap",
			requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
			scope: "orchestration:read orchestration:operate",
			client_label: "t3code-mcp",
			...fields,
		}).toString(),
	});
}

test("a link exchanges once for a 30-day bearer token, as captured", async () => {
	const link = sim.pairingLink();
	expect(link).toMatch(new RegExp(`^${sim.url}/pair#token=pair-[0-9a-f]+$`));
	const res = await exchange(link);
	expect(res.status).toBe(200);
	expect(res.headers.get("cache-control")).toBe("no-store");
	expect(res.headers.get("pragma")).toBe("no-cache");
	const body = (await res.json()) as Record<string, unknown>;
	const captured = await Bun.file(
		join(
			import.meta.dir,
			"../../../test/fixtures/captures-v2/http-oauth-token.json",
		),
	).json();
	expect({ ...body, access_token: "<redacted>" }).toEqual(captured);
	const session = await (
		await fetch(`${sim.url}/api/auth/session`, {
			headers: { authorization: `Bearer ${body.access_token}` },
		})
	).json();
	expect(session).toMatchObject({
		authenticated: true,
		scopes: ["orchestration:read", "orchestration:operate"],
		sessionMethod: "bearer-access-token",
		expiresAt: "2026-12-29T19:09:51.797Z",
	});

	const again = await exchange(link);
	expect(again.status).toBe(401);
	expect(await again.json()).toMatchObject({
		_tag: "EnvironmentAuthInvalidError",
		code: "auth_invalid",
		reason: "invalid_credential",
	});

	// 30 days later the token is refused like any unknown one.
	now += 30 * 24 * 3600 * 1000;
	const late = await (
		await fetch(`${sim.url}/api/auth/session`, {
			headers: { authorization: `Bearer ${body.access_token}` },
		})
	).json();
	expect(late).toMatchObject({ authenticated: false });
});

test("a scope may be narrowed, never widened; an expired link is refused", async () => {
	const readOnly = sim.pairingLink({ scopes: ["orchestration:read"] });
	const wide = await exchange(readOnly);
	expect(wide.status).toBe(400);
	expect(await wide.json()).toMatchObject({
		code: "invalid_scope",
		reason: "scope_not_granted",
	});
	const narrow = await exchange(readOnly, { scope: "orchestration:read" });
	expect(((await narrow.json()) as { scope: string }).scope).toBe(
		"orchestration:read",
	);

	const short = sim.pairingLink({ ttlMs: 1000 });
	now += 1000;
	expect((await exchange(short)).status).toBe(401);
	expect(
		(await exchange(sim.pairingLink(), { grant_type: "password" })).status,
	).toBe(400);
});
