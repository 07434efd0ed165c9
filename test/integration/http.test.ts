/** The HTTP surface around /mcp: health, metrics, Host/Origin checks and the inbound bearer. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freePort } from "../helpers/process.ts";
import { callTool, type Stack, startStack } from "../helpers/stack.ts";

const listTools = JSON.stringify({
	jsonrpc: "2.0",
	id: 1,
	method: "tools/list",
	params: {},
});
const mcpHeaders = {
	"content-type": "application/json",
	accept: "application/json, text/event-stream",
	"mcp-protocol-version": "2025-11-25",
};

describe("loopback listener, machines down", () => {
	let stack: Stack;
	beforeAll(async () => {
		const a = await freePort();
		const b = await freePort();
		stack = await startStack({
			machines: [
				{ name: "a", url: `http://127.0.0.1:${a}` },
				{ name: "b", url: `http://127.0.0.1:${b}` },
			],
			server: { token: "inbound-secret-0123" },
		});
	});
	afterAll(async () => {
		await stack.stop();
	});

	// Its latency (target < 50 ms) is measured in bench/, not asserted here.
	test("/healthz answers 200 with every machine down", async () => {
		const response = await fetch(`${stack.server.url}/healthz`, {
			headers: { authorization: "Bearer inbound-secret-0123" },
		});
		expect(response.status).toBe(200);
		const body = (await response.json()) as Record<string, unknown>;
		expect(body.status).toBe("ok");
		expect(Object.keys(body.machines as object).sort()).toEqual(["a", "b"]);
		expect(body.hook).toBe("not configured");
		expect(body.outbox).toEqual({
			pending: 0,
			oldest_pending_s: 0,
			held: 0,
			dead: 0,
		});
	});

	test("with T3CODE_MCP_TOKEN set, /healthz without that bearer says only status and version", async () => {
		for (const authorization of [
			undefined,
			"Bearer wrong",
			"inbound-secret-0123",
		]) {
			const response = await fetch(`${stack.server.url}/healthz`, {
				headers: authorization ? { authorization } : {},
			});
			// Still 200: `healthcheck` and container probes carry no secret.
			expect(response.status).toBe(200);
			expect(await response.json()).toEqual({
				status: "ok",
				version: stack.server.services.version,
			});
		}
	});

	test("a foreign Host is refused on loopback (DNS rebinding)", async () => {
		const response = await fetch(`${stack.server.mcpUrl}`, {
			method: "POST",
			headers: {
				...mcpHeaders,
				host: "evil.example",
				authorization: "Bearer inbound-secret-0123",
			},
			body: listTools,
		});
		expect(response.status).toBe(403);
	});

	test("a browser Origin is refused unless allowed", async () => {
		const response = await fetch(`${stack.server.mcpUrl}`, {
			method: "POST",
			headers: {
				...mcpHeaders,
				origin: "http://evil.example",
				authorization: "Bearer inbound-secret-0123",
			},
			body: listTools,
		});
		expect(response.status).toBe(403);
	});

	test("missing or wrong bearer → plain 401 without OAuth hints", async () => {
		for (const authorization of [undefined, "Bearer wrong"]) {
			const response = await fetch(`${stack.server.mcpUrl}`, {
				method: "POST",
				headers: { ...mcpHeaders, ...(authorization ? { authorization } : {}) },
				body: listTools,
			});
			expect(response.status).toBe(401);
			expect(response.headers.get("www-authenticate")).toBeNull();
			expect(await response.json()).toEqual({ error: "unauthorized" });
		}
	});

	test("the right bearer is served, and /metrics needs it too", async () => {
		const client = await stack.client();
		const { data } = await callTool<{ machines: unknown[] }>(
			client,
			"t3_machines",
		);
		expect(data.machines).toHaveLength(2);
		expect((await fetch(`${stack.server.url}/metrics`)).status).toBe(401);
		const metrics = await fetch(`${stack.server.url}/metrics`, {
			headers: { authorization: "Bearer inbound-secret-0123" },
		});
		expect(metrics.status).toBe(200);
		const text = await metrics.text();
		expect(text).toContain('t3code_mcp_machines{state="offline"} 2');
		expect(text).toContain(
			't3code_mcp_tool_calls_total{client="default",tool="t3_machines",result="ok"}',
		);
	});

	test("an MCP-Protocol-Version it does not serve is refused listing every version it serves, 2026-07-28 included", async () => {
		const post = (version: string) =>
			fetch(`${stack.server.url}/mcp`, {
				method: "POST",
				headers: {
					...mcpHeaders,
					"mcp-protocol-version": version,
					authorization: "Bearer inbound-secret-0123",
				},
				body: listTools,
			});
		const refused = await post("1999-01-01");
		expect(refused.status).toBe(400);
		const body = (await refused.json()) as {
			error: { message: string; data: { supported: string[] } };
		};
		const listed = body.error.data.supported;
		expect(listed).toContain("2026-07-28");
		expect(listed).toContain("2025-11-25");
		expect(listed).toContain("2025-03-26");
		expect(body.error.message).toContain(
			`Unsupported protocol version: "1999-01-01" (supported versions: ${listed.join(", ")})`,
		);
		// Each one listed is served: none of them is refused for its version.
		for (const version of listed) {
			const answer = await (await post(version)).text();
			expect([version, answer]).not.toEqual([
				version,
				expect.stringContaining("Unsupported protocol version"),
			]);
		}
		// And the 2026 era really works end to end.
		const modern = await stack.client({ era: "modern" });
		expect((await modern.listTools()).tools.length).toBeGreaterThan(0);
	});
});

describe("container-style listener on 0.0.0.0", () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await startStack({ server: { host: "0.0.0.0" } });
	});
	afterAll(async () => {
		await stack.stop();
	});

	test("answers Host: t3code-mcp:8000 with no Origin and no extra setting", async () => {
		const response = await fetch(`http://127.0.0.1:${stack.server.port}/mcp`, {
			method: "POST",
			headers: { ...mcpHeaders, host: "t3code-mcp:8000" },
			body: listTools,
		});
		expect(response.status).toBe(200);
		const text = await response.text();
		expect(text).toContain("t3_dispatch");
	});
});
