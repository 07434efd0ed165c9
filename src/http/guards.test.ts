import { describe, expect, it } from "bun:test";
import { Hono } from "hono";
import { hostGuard, originGuard } from "./guards.ts";
import { hostName, isLoopback } from "./host.ts";

const withGuard = (guard: ReturnType<typeof hostGuard>) => {
	const app = new Hono();
	app.use(guard);
	app.get("/healthz", (c) => c.json({ status: "ok" }));
	return app;
};

const get = (
	app: Hono,
	headers: Record<string, string>,
	url = "http://localhost/healthz",
) => app.request(url, { headers });

describe("hostGuard", () => {
	const loopback = withGuard(
		hostGuard({ listenHost: "127.0.0.1", allowedHosts: [] }),
	);

	it("on loopback, refuses a foreign Host", async () => {
		const res = await get(loopback, { Host: "evil.example" });
		expect(res.status).toBe(403);
		expect(await res.json()).toEqual({
			error: "host not allowed",
			host: "evil.example",
		});
		expect(
			(await get(loopback, { Host: "localhost.evil.example:8000" })).status,
		).toBe(403);
		expect((await get(loopback, { Host: "127.0.0.1.nip.io" })).status).toBe(
			403,
		);
		expect((await get(loopback, { Host: "[::1" })).status).toBe(403);
	});

	it("on loopback, accepts loopback names with or without port", async () => {
		for (const host of [
			"localhost:8000",
			"127.0.0.1:8000",
			"[::1]:8000",
			"LOCALHOST",
			"127.1.2.3",
			"localhost.",
		]) {
			const res = await get(loopback, { Host: host });
			expect(res.status, host).toBe(200);
		}
	});

	it("falls back to the request URL when there is no Host header", async () => {
		expect(
			(await loopback.request("http://localhost:8000/healthz")).status,
		).toBe(200);
		expect((await loopback.request("http://evil.example/healthz")).status).toBe(
			403,
		);
	});

	it("on loopback, accepts listed hosts too", async () => {
		const app = withGuard(
			hostGuard({ listenHost: "localhost", allowedHosts: ["mcp.example"] }),
		);
		expect((await get(app, { Host: "MCP.example:443" })).status).toBe(200);
		expect((await get(app, { Host: "other.example" })).status).toBe(403);
	});

	it("::1 listening counts as loopback", async () => {
		const app = withGuard(hostGuard({ listenHost: "::1", allowedHosts: [] }));
		expect((await get(app, { Host: "evil.example" })).status).toBe(403);
		expect((await get(app, { Host: "[::1]:8000" })).status).toBe(200);
	});

	it("on 0.0.0.0 without ALLOWED_HOSTS, any Host passes (the container case)", async () => {
		const app = withGuard(
			hostGuard({ listenHost: "0.0.0.0", allowedHosts: [] }),
		);
		expect((await get(app, { Host: "t3code-mcp:8000" })).status).toBe(200);
		expect((await get(app, { Host: "evil.example" })).status).toBe(200);
	});

	it("on 0.0.0.0 with ALLOWED_HOSTS, only listed and loopback hosts pass", async () => {
		const app = withGuard(
			hostGuard({ listenHost: "0.0.0.0", allowedHosts: ["t3code-mcp", "::2"] }),
		);
		expect((await get(app, { Host: "t3code-mcp:8000" })).status).toBe(200);
		expect((await get(app, { Host: "[::2]:8000" })).status).toBe(200);
		expect((await get(app, { Host: "localhost:8000" })).status).toBe(200);
		const res = await get(app, { Host: "evil.example:8000" });
		expect(res.status).toBe(403);
		expect(await res.json()).toEqual({
			error: "host not allowed",
			host: "evil.example:8000",
		});
	});
});

describe("originGuard", () => {
	const appOn = (listenHost: string, allowedOrigins: string[]) => {
		const app = new Hono();
		app.use(originGuard({ listenHost, allowedOrigins }));
		app.post("/mcp", (c) => c.json({ ok: true }));
		return (headers: Record<string, string>) =>
			app.request("http://localhost/mcp", { method: "POST", headers });
	};
	const listed = ["https://claude.ai", "http://localhost:5173"];
	// Listening on all interfaces: only the list counts, loopback origins included.
	const post = appOn("0.0.0.0", listed);
	const loopback = appOn("127.0.0.1", listed);

	it("lets requests without Origin through", async () => {
		expect((await post({})).status).toBe(200);
		expect((await loopback({})).status).toBe(200);
	});

	it("refuses an unlisted Origin with 403 JSON", async () => {
		const res = await post({ Origin: "https://evil.example" });
		expect(res.status).toBe(403);
		expect(await res.json()).toEqual({
			error: "origin not allowed",
			origin: "https://evil.example",
		});
		expect((await post({ Origin: "null" })).status).toBe(403);
		expect((await post({ Origin: "http://localhost:5174" })).status).toBe(403);
		expect((await post({ Origin: "http://claude.ai" })).status).toBe(403);
	});

	it("takes Origin: null for a page's own form only with Sec-Fetch-Site: same-origin", async () => {
		// A page of this server under Referrer-Policy: no-referrer posts with Origin: null.
		const own = { Origin: "null", "Sec-Fetch-Site": "same-origin" };
		expect((await post(own)).status).toBe(200);
		expect(
			(await post({ Origin: "null", "Sec-Fetch-Site": "cross-site" })).status,
		).toBe(403);
		expect(
			(await post({ Origin: "null", "Sec-Fetch-Site": "same-site" })).status,
		).toBe(403);
	});

	it("accepts a listed Origin, case-insensitive on scheme and host", async () => {
		expect((await post({ Origin: "https://claude.ai" })).status).toBe(200);
		expect((await post({ Origin: "HTTPS://Claude.AI" })).status).toBe(200);
		expect((await post({ Origin: "https://claude.ai:443" })).status).toBe(200);
		expect((await post({ Origin: "http://localhost:5173" })).status).toBe(200);
	});

	it("with an empty list, refuses every Origin off loopback", async () => {
		const strict = appOn("0.0.0.0", []);
		expect((await strict({ Origin: "http://localhost:8000" })).status).toBe(
			403,
		);
		expect(
			(await appOn("192.168.1.5", [])({ Origin: "http://127.0.0.1" })).status,
		).toBe(403);
	});

	it("listening on loopback, accepts loopback origins on any port, without CORS headers", async () => {
		for (const listenHost of ["127.0.0.1", "localhost", "::1"]) {
			const on = appOn(listenHost, []);
			for (const origin of [
				"http://localhost:8000",
				"http://localhost",
				"https://LOCALHOST:3000",
				"http://127.0.0.1:6274",
				"http://[::1]:8000",
				"http://localhost.:8000",
			]) {
				const res = await on({ Origin: origin });
				expect(res.status, `${listenHost} ${origin}`).toBe(200);
				const cors = [...res.headers.keys()].filter((k) =>
					k.startsWith("access-control-"),
				);
				expect(cors).toEqual([]);
			}
		}
	});

	it("listening on loopback, still refuses every other Origin", async () => {
		for (const origin of [
			"http://evil.example",
			"http://localhost.evil.example:8000",
			"http://127.0.0.1.nip.io",
			"http://192.168.1.5:8000",
			"null",
			"file://localhost",
			"chrome-extension://localhost",
			"ws://localhost:8000",
			"not an origin",
		]) {
			expect((await loopback({ Origin: origin })).status, origin).toBe(403);
		}
	});
});

describe("host helpers", () => {
	it("hostName strips port, brackets and a trailing dot", () => {
		expect(hostName("Example.COM:8000")).toBe("example.com");
		expect(hostName("[::1]:8000")).toBe("::1");
		expect(hostName("[::1]")).toBe("::1");
		expect(hostName("localhost.")).toBe("localhost");
		expect(hostName("::1")).toBeUndefined();
		expect(hostName("a:b")).toBeUndefined();
		expect(hostName("[::1]x")).toBeUndefined();
		expect(hostName("")).toBeUndefined();
	});

	it("isLoopback", () => {
		for (const h of [
			"localhost",
			"127.0.0.1",
			"127.255.0.9",
			"::1",
			"[::1]",
			"::ffff:127.0.0.1",
		]) {
			expect(isLoopback(h), h).toBe(true);
		}
		for (const h of [
			"0.0.0.0",
			"::",
			"128.0.0.1",
			"127.0.0.256",
			"localhost.example",
			"10.0.0.1",
		]) {
			expect(isLoopback(h), h).toBe(false);
		}
	});
});
