/**
 * A stalled request body is cut (issue 16): a POST /mcp body must arrive within its deadline
 * (30 s; 400 ms here, injected) counted from the request's start, else 408 and the connection is
 * closed. Over a real socket (node:net) so the client can announce more than it sends: a short
 * body, a chunked body that stops, and one trickled a byte at a time (each byte arrives well
 * within the deadline; the whole does not). A body that arrives in time is served as usual.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { BODY_TIMEOUT_MS } from "../../src/http/mcp-body.ts";
import { type Stack, startStack } from "../helpers/stack.ts";

const DEADLINE_MS = 400;

let stack: Stack;
beforeAll(async () => {
	stack = await startStack({ bodyTimeoutMs: DEADLINE_MS });
});
afterAll(async () => {
	await stack.stop();
});

interface Exchange {
	/** Everything the server sent before it closed the connection. */
	response: string;
	/** From the first byte written to the close. */
	ms: number;
}

/**
 * Writes `head` and the first body bytes on a raw connection, then `more` (called with a write
 * function until the socket closes); resolves when the server closes the connection.
 */
function exchange(
	head: string,
	body: string,
	more?: (write: (s: string) => void) => () => void,
): Promise<Exchange> {
	const port = stack.server.port;
	return new Promise((resolve, reject) => {
		const socket = connect(port, "127.0.0.1");
		let response = "";
		let stopMore = () => {};
		const started = performance.now();
		// A backstop, so a server that never cuts fails the test instead of hanging it.
		const backstop = setTimeout(() => {
			socket.destroy();
			reject(
				new Error(
					`still connected after 10 s; got ${JSON.stringify(response)}`,
				),
			);
		}, 10_000);
		socket.on("data", (d) => {
			response += d.toString();
		});
		socket.on("error", () => {});
		socket.on("close", () => {
			clearTimeout(backstop);
			stopMore();
			resolve({ response, ms: performance.now() - started });
		});
		socket.write(head + body);
		if (more) stopMore = more((s) => socket.write(s));
	});
}

const headers = (extra: string) =>
	`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${stack.server.port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n${extra}\r\n`;

const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });

describe("POST /mcp body deadline", () => {
	test("the production deadline is 30 s", () => {
		expect(BODY_TIMEOUT_MS).toBe(30_000);
	});

	test("Content-Length 100, 10 bytes sent, then nothing: 408 at the deadline, connection closed", async () => {
		const { response, ms } = await exchange(
			headers("Content-Length: 100\r\n"),
			ping.slice(0, 10),
		);
		expect(response).toStartWith("HTTP/1.1 408");
		expect(response.toLowerCase()).toContain("connection: close");
		expect(response).toContain(
			`"error":{"code":-32000,"message":"Request body not received within 0.4 s of the request's start"}`,
		);
		expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
		expect(ms).toBeLessThan(DEADLINE_MS + 3_000);
	});

	test("a chunked body that stops after its first chunk: 408", async () => {
		const part = ping.slice(0, 10);
		const { response } = await exchange(
			headers("Transfer-Encoding: chunked\r\n"),
			`${part.length.toString(16)}\r\n${part}\r\n`,
		);
		expect(response).toStartWith("HTTP/1.1 408");
	});

	test("a body trickled a byte every 50 ms: cut at the deadline from the request's start", async () => {
		const padded = `${ping}${" ".repeat(200)}`;
		let at = 0;
		const { response, ms } = await exchange(
			headers(`Content-Length: ${padded.length}\r\n`),
			"",
			(write) => {
				const every = setInterval(() => {
					if (at < padded.length) write(padded[at++] as string);
				}, 50);
				return () => clearInterval(every);
			},
		);
		expect(response).toStartWith("HTTP/1.1 408");
		expect(at).toBeLessThan(padded.length);
		expect(ms).toBeLessThan(DEADLINE_MS + 3_000);
	});

	test("a whole body in time is served", async () => {
		const port = stack.server.port;
		const socket = connect(port, "127.0.0.1");
		let got = "";
		const answered = new Promise<void>((resolve) => {
			socket.on("data", (d) => {
				got += d.toString();
				if (got.includes('"id":1')) resolve();
			});
		});
		socket.write(headers(`Content-Length: ${ping.length}\r\n`) + ping);
		await answered;
		socket.destroy();
		expect(got).toStartWith("HTTP/1.1 200");
		expect(got).toContain('"result":{}');
	});
});
