/**
 * The quick calls' JSON path on its own: which requests take it, and that a 2025-era call on it
 * is cancelled when its client gives up, as the SDK's own serving cancels it.
 */
import { describe, expect, test } from "bun:test";
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { createJsonCalls, quickCallEra } from "./json-calls.ts";

const call = (params: Record<string, unknown>) => ({
	jsonrpc: "2.0",
	id: 1,
	method: "tools/call",
	params: { name: "t3_machines", arguments: {}, ...params },
});
const post = (body: unknown, signal?: AbortSignal) =>
	new Request("http://127.0.0.1/mcp", {
		method: "POST",
		headers: {
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			"mcp-protocol-version": "2025-11-25",
		},
		body: JSON.stringify(body),
		...(signal && { signal }),
	});

describe("quickCallEra", () => {
	test("a _meta that is no object is no crash: the transport refuses it", () => {
		for (const meta of ["x", 7, true, null]) {
			const message = call({ _meta: meta });
			expect(quickCallEra(post(message), message)).toBe("legacy");
		}
		const modern = call({
			_meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
		});
		expect(quickCallEra(post(modern), modern)).toBe("modern");
		const progress = call({ _meta: { progressToken: "p" } });
		expect(quickCallEra(post(progress), progress)).toBeUndefined();
	});
});

describe("createJsonCalls, 2025 era", () => {
	test("a client that gives up cancels the tool's signal", async () => {
		const cancelled = Promise.withResolvers<void>();
		const started = Promise.withResolvers<void>();
		const serve = createJsonCalls(
			() => {
				const server = new McpServer({ name: "test", version: "1" });
				server.registerTool(
					"t3_machines",
					{ inputSchema: z.object({}) },
					(_args, ctx) =>
						new Promise((_resolve, reject) => {
							started.resolve();
							ctx.mcpReq.signal.addEventListener("abort", () => {
								cancelled.resolve();
								reject(new Error("cancelled"));
							});
						}),
				);
				return server;
			},
			() => {},
			1_000_000,
		);
		const giveUp = new AbortController();
		const message = call({});
		const answer = serve(
			post(message, giveUp.signal),
			message,
			undefined,
			"legacy",
		).catch(() => undefined);
		await started.promise;
		giveUp.abort();
		await cancelled.promise;
		await answer;
	});

	test("a malformed _meta gets a JSON-RPC error, not a crash", async () => {
		const serve = createJsonCalls(
			() => new McpServer({ name: "test", version: "1" }),
			() => {},
			1_000_000,
		);
		const message = call({ _meta: "x" });
		const response = await serve(post(message), message, undefined, "legacy");
		const body = (await response.json()) as {
			jsonrpc: string;
			error?: unknown;
		};
		expect(body.jsonrpc).toBe("2.0");
		expect(body.error).toBeDefined();
	});
});
