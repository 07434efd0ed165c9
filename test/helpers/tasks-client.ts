/**
 * The official Tasks requester (`@modelcontextprotocol/ext-tasks`) on a connected SDK client.
 * On 2026-07-28 the SDK client's codecs refuse task shapes, so the library needs the host's own
 * request path (`rawDispatch`) and the request framing (`v2RequestFraming`), as its docs say:
 * here that path is one POST per request to /mcp with the standard headers, its SSE (or JSON)
 * answer matched by id. `raw()` is the same path for requests the library does not send.
 */
import type { Client } from "@modelcontextprotocol/client";
import {
	createTaskSessionFromClient,
	type TaskEnabledSession,
} from "@modelcontextprotocol/ext-tasks/client";

export const MODERN = "2026-07-28";
export const TASKS = "io.modelcontextprotocol/tasks";
const CLIENT_INFO = { name: "t3code-mcp-tasks-test", version: "1.0.0" };

export type RawResponse =
	| { kind: "result"; result: Record<string, unknown> }
	| { kind: "error"; error: { code: number; message: string; data?: unknown } };

export interface RawOptions {
	/** Declare the Tasks extension in this request's capabilities (default true). */
	tasks?: boolean;
	signal?: AbortSignal;
	bearer?: string;
}

const nameOf = (method: string, params: Record<string, unknown>) =>
	method === "tools/call"
		? (params.name as string)
		: method.startsWith("tasks/")
			? (params.taskId as string)
			: undefined;

/** One 2026-07-28 request over HTTP; the JSON-RPC response (its HTTP status when not 200). */
export async function rawRequest(
	mcpUrl: string,
	method: string,
	params: Record<string, unknown>,
	options: RawOptions & { id?: number | string } = {},
): Promise<RawResponse & { status: number }> {
	const id = options.id ?? Math.floor(Math.random() * 1e9);
	const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
	const body = {
		jsonrpc: "2.0",
		id,
		method,
		params: {
			...params,
			_meta: {
				...meta,
				"io.modelcontextprotocol/protocolVersion": MODERN,
				"io.modelcontextprotocol/clientInfo": CLIENT_INFO,
				"io.modelcontextprotocol/clientCapabilities":
					options.tasks === false ? {} : { extensions: { [TASKS]: {} } },
			},
		},
	};
	const name = nameOf(method, params);
	const response = await fetch(mcpUrl, {
		method: "POST",
		headers: {
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			"mcp-protocol-version": MODERN,
			"mcp-method": method,
			...(name ? { "mcp-name": name } : {}),
			...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
		},
		body: JSON.stringify(body),
		signal: options.signal,
	});
	const text = await response.text();
	const messages = (
		response.headers.get("content-type")?.includes("text/event-stream")
			? text
					.split("\n")
					.filter((l) => l.startsWith("data:"))
					.map((l) => l.slice(5).trim())
			: [text]
	)
		.filter((t) => t.length > 0)
		.map((t) => {
			try {
				return JSON.parse(t) as Record<string, unknown>;
			} catch {
				return {};
			}
		});
	const reply = messages.find((m) => m.id === id) ?? messages[0] ?? {};
	if (reply.error)
		return {
			kind: "error",
			error: reply.error as RawResponse extends { error: infer E } ? E : never,
			status: response.status,
		};
	return {
		kind: "result",
		result: (reply.result ?? {}) as Record<string, unknown>,
		status: response.status,
	};
}

/** A task session for a connected client (modern: over `rawRequest`). */
export function taskSession(
	client: Client,
	mcpUrl: string,
	options: { bearer?: string } = {},
): TaskEnabledSession {
	if (client.getProtocolEra() !== "modern")
		return createTaskSessionFromClient(client, { endpointId: mcpUrl });
	return createTaskSessionFromClient(client, {
		endpointId: mcpUrl,
		rawDispatch: async (request, dispatchOptions) => {
			const { method, params, id } = request as {
				method: string;
				params?: Record<string, unknown>;
				id?: number | string;
			};
			const { status: _status, ...response } = await rawRequest(
				mcpUrl,
				method,
				params ?? {},
				{ id, signal: dispatchOptions?.signal, bearer: options.bearer },
			);
			return response as never;
		},
		v2RequestFraming: {
			protocolVersion: MODERN,
			clientInfo: CLIENT_INFO,
			clientCapabilities: {},
		},
	});
}
