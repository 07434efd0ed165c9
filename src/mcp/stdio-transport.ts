/**
 * MCP over stdio that answers every line, in place of the SDK's StdioServerTransport (which
 * skips lines that are not JSON, reports non-messages only to `onerror`, closes on a line over
 * its buffer limit, and drops requests in flight when stdin ends):
 * - invalid JSON → -32700; valid JSON that is not a JSON-RPC message (`[]`, `null`, `42`,
 *   `jsonrpc` other than "2.0") → -32600, with the request's id when it has one;
 * - a batch (a JSON array) is answered as one array when the era in use has batches
 *   (2025-03-26), else refused with an error per element (2025-06-18 and later removed them);
 * - a line over the size limit → -32600 and reading goes on (stdio-framing.ts);
 * - at the end of stdin, every request read before it is answered, then the transport closes.
 * stdout carries only the JSON-RPC this transport writes.
 */
import {
	type JSONRPCMessage,
	parseJSONRPCMessage,
	SUPPORTED_PROTOCOL_VERSIONS,
	type Transport,
} from "@modelcontextprotocol/server";
import { badInitialize } from "./initialize-check.ts";
import {
	createLineReader,
	leadingId,
	MAX_LINE_BYTES,
} from "./stdio-framing.ts";

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/** The one era whose spec has JSON-RPC batches: 2025-06-18 removed them, 2026-07-28 too. */
const BATCH_ERAS = new Set(["2025-03-26"]);

const MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";

type Id = string | number;

interface ErrorResponse {
	jsonrpc: "2.0";
	id: Id | null;
	error: { code: number; message: string };
}

export interface StdioStreams {
	stdin: NodeJS.ReadableStream;
	stdout: NodeJS.WritableStream;
}

export interface LineTransportOptions {
	maxLineBytes?: number;
	/**
	 * The transport closed: "drained" when stdin ended and everything read before it was
	 * answered, "stdout closed" when the reader went away, "closed" on `close()`.
	 */
	onClosed?: (reason: "drained" | "stdout closed" | "closed") => void;
	/** stdin ended; requests read before it are still to be answered. */
	onInputEnd?: () => void;
}

export interface LineTransport extends Transport {
	/** Requests read and not yet answered. */
	inFlight(): number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
	typeof v === "object" && v !== null && !Array.isArray(v);

const idOf = (v: unknown): Id | null =>
	isObject(v) && (typeof v.id === "string" || typeof v.id === "number")
		? v.id
		: null;

/** JSON-RPC ids 1 and "1" are different requests. */
const keyOf = (id: Id) => `${typeof id}:${id}`;

const failure = (
	id: Id | null,
	code: number,
	message: string,
): ErrorResponse => ({
	jsonrpc: "2.0",
	id,
	error: { code, message },
});

/** Why `value` is not a JSON-RPC message, or undefined when it is one. */
export function notAMessage(value: unknown): string | undefined {
	if (!isObject(value))
		return `Invalid Request: a JSON-RPC message is an object, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`;
	if (value.jsonrpc !== "2.0")
		return `Invalid Request: "jsonrpc" must be "2.0", got ${JSON.stringify(value.jsonrpc) ?? "nothing"}`;
	try {
		parseJSONRPCMessage(value);
		return undefined;
	} catch {
		return "Invalid Request: not a JSON-RPC request, notification or response (a request has a string method and a string or integer id)";
	}
}

const isRequest = (m: Record<string, unknown>) =>
	typeof m.method === "string" && "id" in m;
const isResponse = (m: Record<string, unknown>) =>
	!("method" in m) && ("result" in m || "error" in m);

/** The transport on the given streams (process.stdin / process.stdout in `stdio`). */
export function createLineTransport(
	streams: StdioStreams,
	options: LineTransportOptions = {},
): LineTransport {
	const max = options.maxLineBytes ?? MAX_LINE_BYTES;
	const { stdin, stdout } = streams;
	/** Requests delivered and not answered, by id key, with their method. */
	const pending = new Map<string, string>();
	/** Open batches (2025-03-26): each element request's key → its batch and slot. */
	const batchSlots = new Map<string, { batch: Batch; slot: number }>();
	let version: string | undefined;
	let ended = false;
	let closed = false;
	let written: Promise<void> = Promise.resolve();

	interface Batch {
		responses: unknown[];
		open: number;
	}

	const write = (message: unknown): Promise<void> => {
		const line = `${JSON.stringify(message)}\n`;
		// Chained: the last write's promise says when everything before it is out.
		written = written.then(
			() =>
				new Promise<void>((resolve) => {
					if (closed) return resolve();
					stdout.write(line, () => resolve());
				}),
		);
		return written;
	};

	const settle = () => {
		if (!ended || closed || pending.size > 0 || batchSlots.size > 0) return;
		void written.then(() => closeFor("drained"));
	};

	/** One message from the client: checked, recorded, handed to the server. */
	const deliver = (message: Record<string, unknown>) => {
		const refused = badInitialize(message);
		if (refused) {
			void write(refused);
			return;
		}
		if (isRequest(message)) {
			pending.set(keyOf(message.id as Id), message.method as string);
			// The era a pipelined batch is judged by: the version asked for, when the server
			// serves it (it then answers with it; its answer is taken when it comes).
			const asked = isObject(message.params)
				? message.params.protocolVersion
				: undefined;
			if (
				message.method === "initialize" &&
				typeof asked === "string" &&
				SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
			)
				version = asked;
			const meta = isObject(message.params) ? message.params._meta : undefined;
			if (isObject(meta) && typeof meta[MODERN_VERSION_KEY] === "string")
				version = meta[MODERN_VERSION_KEY];
		} else if (message.method === "notifications/cancelled") {
			// A cancelled request is not answered: do not wait for it at the end.
			const params = message.params;
			const id = isObject(params) ? params.requestId : undefined;
			if (typeof id === "string" || typeof id === "number") {
				pending.delete(keyOf(id));
				const slot = batchSlots.get(keyOf(id));
				if (slot) {
					batchSlots.delete(keyOf(id));
					slot.batch.responses[slot.slot] = failure(
						id,
						INVALID_REQUEST,
						"Request cancelled",
					);
					closeSlot(slot.batch);
				}
			}
		}
		transport.onmessage?.(message as JSONRPCMessage);
	};

	const closeSlot = (batch: Batch) => {
		batch.open--;
		if (batch.open === 0) void write(batch.responses).then(settle);
	};

	const onBatch = (items: unknown[]) => {
		if (items.length === 0) {
			void write(
				failure(null, INVALID_REQUEST, "Invalid Request: an empty batch"),
			);
			return;
		}
		if (version === undefined || !BATCH_ERAS.has(version)) {
			const message =
				version === undefined
					? "Invalid Request: JSON-RPC batches are part of MCP 2025-03-26 only, which this connection has not negotiated; send one message per line"
					: `Invalid Request: MCP ${version} has no JSON-RPC batches (only 2025-03-26 had them); send one message per line`;
			void write(
				items.map((item) => failure(idOf(item), INVALID_REQUEST, message)),
			);
			return;
		}
		const batch: Batch = { responses: [], open: 0 };
		const deliveries: Record<string, unknown>[] = [];
		for (const item of items) {
			const why = notAMessage(item);
			const message = item as Record<string, unknown>;
			if (why !== undefined) {
				batch.responses.push(failure(idOf(item), INVALID_REQUEST, why));
				continue;
			}
			if (isRequest(message)) {
				const key = keyOf(message.id as Id);
				if (pending.has(key) || batchSlots.has(key)) {
					batch.responses.push(
						failure(
							message.id as Id,
							INVALID_REQUEST,
							"Invalid Request: this id is already in use by a request in flight",
						),
					);
					continue;
				}
				batchSlots.set(key, { batch, slot: batch.responses.length });
				batch.responses.push(undefined);
				batch.open++;
			}
			deliveries.push(message);
		}
		// Slots first, then deliveries: an answer may come back synchronously.
		batch.open++;
		for (const message of deliveries) deliver(message);
		closeSlot(batch);
	};

	const onLine = (line: string) => {
		if (line.trim() === "") return;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch {
			void write(
				failure(null, PARSE_ERROR, "Parse error: the line is not valid JSON"),
			);
			return;
		}
		if (Array.isArray(value)) return onBatch(value);
		const why = notAMessage(value);
		if (why !== undefined) {
			void write(failure(idOf(value), INVALID_REQUEST, why));
			return;
		}
		deliver(value as Record<string, unknown>);
	};

	const reader = createLineReader({
		maxLineBytes: max,
		onLine,
		onOversize(head, bytes) {
			void write(
				failure(
					leadingId(head) ?? null,
					INVALID_REQUEST,
					`Invalid Request: the message is ${bytes} bytes, over the limit of ${max} bytes; send a smaller one`,
				),
			);
		},
	});

	const onData = (chunk: Buffer | string) =>
		reader.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
	const onEnd = () => {
		if (ended) return;
		reader.end();
		ended = true;
		options.onInputEnd?.();
		settle();
	};
	const onStdinError = (error: Error) => {
		transport.onerror?.(error);
		onEnd();
	};
	// The reader went away (EPIPE): nothing can be answered any more.
	const onStdoutError = (error: Error) => {
		transport.onerror?.(error);
		void closeFor("stdout closed");
	};

	const closeFor = async (reason: "drained" | "stdout closed" | "closed") => {
		if (closed) return;
		if (reason !== "stdout closed") await written;
		if (closed) return;
		closed = true;
		stdin.off("data", onData);
		stdin.off("end", onEnd);
		stdin.off("close", onEnd);
		stdin.off("error", onStdinError);
		stdout.off("error", onStdoutError);
		(stdin as { pause?: () => void }).pause?.();
		transport.onclose?.();
		options.onClosed?.(reason);
	};

	const transport: LineTransport = {
		async start() {
			stdin.on("data", onData);
			stdin.on("end", onEnd);
			stdin.on("close", onEnd);
			stdin.on("error", onStdinError);
			stdout.on("error", onStdoutError);
		},
		async send(message) {
			if (closed) return;
			const m = message as Record<string, unknown>;
			if (
				isResponse(m) &&
				(typeof m.id === "string" || typeof m.id === "number")
			) {
				const key = keyOf(m.id);
				const method = pending.get(key);
				pending.delete(key);
				if (method === "initialize" && isObject(m.result)) {
					const negotiated = m.result.protocolVersion;
					if (typeof negotiated === "string") version = negotiated;
				}
				const slot = batchSlots.get(key);
				if (slot) {
					batchSlots.delete(key);
					slot.batch.responses[slot.slot] = message;
					closeSlot(slot.batch);
					return;
				}
				await write(message);
				settle();
				return;
			}
			await write(message);
		},
		close: () => closeFor("closed"),
		setProtocolVersion(negotiated) {
			version = negotiated;
		},
		inFlight: () => pending.size + batchSlots.size,
	};
	return transport;
}
