import { describe, expect, it } from "bun:test";
import { Hono } from "hono";
import { fullRights } from "../config/clients.ts";
import type { AppConfig, ClientConfig } from "../config/types.ts";
import { callerMatcher } from "../rights/callers.ts";
import { type CallerEnv, callerGuard } from "./callers.ts";

const config = (
	token: string | undefined,
	clients: ClientConfig[] = [],
): AppConfig =>
	({
		file: "/x/t3code.toml",
		machines: [],
		clients,
		server: { token },
	}) as unknown as AppConfig;

const client = (name: string, token: string | undefined): ClientConfig => ({
	...fullRights(name, token),
	access: "read-only",
	approve: false,
});

function appFor(cfg: AppConfig) {
	const app = new Hono<CallerEnv>();
	app.use("/mcp", callerGuard(callerMatcher(cfg)));
	app.post("/mcp", (c) => c.json({ client: c.get("client").name }));
	app.get("/healthz", (c) => c.json({ status: "ok" }));
	return (authorization?: string) =>
		app.request("http://localhost/mcp", {
			method: "POST",
			headers: authorization === undefined ? {} : { authorization },
		});
}

describe("callerGuard with one T3CODE_MCP_TOKEN", () => {
	const post = appFor(config("s3cret-token-0123"));

	it("refuses a missing or wrong token with a plain 401 and no WWW-Authenticate", async () => {
		for (const authorization of [
			undefined,
			"Bearer nope",
			"Bearer s3cret-token-01234",
			"Basic s3cret-token-0123",
			"s3cret-token-0123",
			"Bearer ",
		]) {
			const res = await post(authorization);
			expect(res.status, String(authorization)).toBe(401);
			expect(res.headers.get("www-authenticate")).toBeNull();
			expect(await res.json()).toEqual({ error: "unauthorized" });
		}
	});

	it("accepts the right token (scheme case-insensitive) as the client default", async () => {
		for (const scheme of ["Bearer", "bearer"]) {
			const res = await post(`${scheme} s3cret-token-0123`);
			expect(res.status).toBe(200);
			expect(await res.json()).toEqual({ client: "default" });
		}
	});

	it("lets everything through as default when no token and no client is configured", async () => {
		const res = await appFor(config(undefined))();
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ client: "default" });
	});
});

describe("callerGuard with [clients.*]", () => {
	const post = appFor(
		config("server-token-0123", [
			fullRights("default", "server-token-0123"),
			client("agent", "agent-token-0123456"),
			client("human", "human-token-0123456"),
			client("unset", undefined),
		]),
	);

	it("the bearer picks its client", async () => {
		expect(await (await post("Bearer agent-token-0123456")).json()).toEqual({
			client: "agent",
		});
		expect(await (await post("Bearer human-token-0123456")).json()).toEqual({
			client: "human",
		});
		expect(await (await post("Bearer server-token-0123")).json()).toEqual({
			client: "default",
		});
	});

	it("anything else is 401: no bearer, another string, an empty bearer (a client without a token never matches)", async () => {
		for (const authorization of [
			undefined,
			"Bearer ",
			"Bearer agent-token-012345",
			"Bearer agent-token-0123456x",
		])
			expect((await post(authorization)).status, String(authorization)).toBe(
				401,
			);
	});

	it("an operator route can accept only some clients", async () => {
		const cfg = config(undefined, [
			client("agent", "agent-token-0123456"),
			fullRights("ops", "ops-token-012345678"),
		]);
		const app = new Hono<CallerEnv>();
		app.use(
			"/metrics",
			callerGuard(callerMatcher(cfg), (c) => c.access === "full-access"),
		);
		app.get("/metrics", (c) => c.text("ok"));
		const get = (token: string) =>
			app.request("http://localhost/metrics", {
				headers: { authorization: `Bearer ${token}` },
			});
		expect((await get("agent-token-0123456")).status).toBe(401);
		expect((await get("ops-token-012345678")).status).toBe(200);
	});
});
