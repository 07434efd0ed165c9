/**
 * `[server] public_url` in the Host and Origin guards (CONTRACT.md "Approval links"): its host
 * is an accepted Host and its origin an accepted Origin, read at each request (a reload may
 * change it), and it never turns the Host check on where it is off (0.0.0.0 without a list).
 */
import { describe, expect, it } from "bun:test";
import { Hono } from "hono";
import { hostGuard, originGuard } from "./guards.ts";

let publicUrl: string | undefined = "https://t3mcp.example.ts.net";

const app = (listenHost: string) => {
	const hono = new Hono();
	hono.use(
		hostGuard({ listenHost, allowedHosts: [], publicUrl: () => publicUrl }),
	);
	hono.use(
		originGuard({ listenHost, allowedOrigins: [], publicUrl: () => publicUrl }),
	);
	hono.get("/healthz", (c) => c.json({ status: "ok" }));
	return hono;
};

const get = (hono: Hono, headers: Record<string, string>) =>
	hono.request("http://localhost/healthz", { headers });

describe("public_url in the guards", () => {
	it("on loopback, its host is accepted, with or without port", async () => {
		publicUrl = "https://t3mcp.example.ts.net";
		const loopback = app("127.0.0.1");
		expect((await get(loopback, { Host: "t3mcp.example.ts.net" })).status).toBe(
			200,
		);
		expect(
			(await get(loopback, { Host: "t3mcp.example.ts.net:443" })).status,
		).toBe(200);
		expect((await get(loopback, { Host: "other.example.ts.net" })).status).toBe(
			403,
		);
	});

	it("its origin is accepted, another is not", async () => {
		publicUrl = "https://t3mcp.example.ts.net";
		const anywhere = app("0.0.0.0");
		expect(
			(await get(anywhere, { Origin: "https://t3mcp.example.ts.net" })).status,
		).toBe(200);
		expect(
			(await get(anywhere, { Origin: "http://t3mcp.example.ts.net" })).status,
		).toBe(403);
		expect(
			(await get(anywhere, { Origin: "http://evil.example" })).status,
		).toBe(403);
	});

	it("on 0.0.0.0 it does not turn the Host check on", async () => {
		publicUrl = "https://t3mcp.example.ts.net";
		expect(
			(await get(app("0.0.0.0"), { Host: "t3code-mcp:8000" })).status,
		).toBe(200);
	});

	it("is read at each request", async () => {
		const loopback = app("127.0.0.1");
		publicUrl = undefined;
		expect((await get(loopback, { Host: "t3mcp.example.ts.net" })).status).toBe(
			403,
		);
		publicUrl = "https://t3mcp.example.ts.net";
		expect((await get(loopback, { Host: "t3mcp.example.ts.net" })).status).toBe(
			200,
		);
	});
});
