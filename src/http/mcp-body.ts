/**
 * Reads a POST /mcp body once, so the initialize check, the read-ahead and the SDK share one
 * parse (the SDK takes it as `parsedBody` and then neither clones nor re-reads the request).
 * Anything that is not a JSON body goes to the SDK as it was sent, so its own answers
 * (parse error, empty body) stay exactly the SDK's. The whole body must arrive within a
 * deadline counted from when its reading starts (first thing after the header checks): a client
 * that announces a body and stalls, or trickles it, is cut instead of holding a connection.
 */
import { ATTACHMENTS_TOTAL_MAX } from "../threads/dispatch/attachments.ts";

/**
 * The largest request body: the largest attachment set we take (3 MiB decoded, 4 MiB as
 * base64) plus 1 MiB for the prompt and the JSON-RPC envelope, so a set the tool allows is
 * never refused as a bare "too large" first. Handed to the SDK too (its default is 4 MiB).
 */
export const MAX_BODY_BYTES =
	Math.ceil(ATTACHMENTS_TOTAL_MAX / 3) * 4 + 1024 * 1024;

/** How long a request body may take to arrive. */
export const BODY_TIMEOUT_MS = 30_000;

export type McpBody =
	/** Parsed JSON: hand it to the SDK as `parsedBody`. */
	| { kind: "json"; message: unknown }
	/** Not JSON (or empty): hand this request, with the same body, to the SDK. */
	| { kind: "raw"; request: Request }
	| { kind: "too-large" }
	/** Not all of it arrived within the deadline. */
	| { kind: "timeout" };

export async function readMcpBody(
	request: Request,
	maxBytes = MAX_BODY_BYTES,
	timeoutMs = BODY_TIMEOUT_MS,
): Promise<McpBody> {
	// A declared size over the limit: the SDK refuses it without reading a byte.
	if (Number(request.headers.get("content-length")) > maxBytes)
		return { kind: "raw", request };
	const stop = new AbortController();
	let timer: ReturnType<typeof setTimeout> | undefined;
	const late = new Promise<"late">((resolve) => {
		timer = setTimeout(() => resolve("late"), timeoutMs);
	});
	const reading = readLimited(request, maxBytes, stop.signal);
	reading.catch(() => {}); // when it loses the race, its end (the socket closing) is no error
	let text: string | undefined;
	try {
		const got = await Promise.race([reading, late]);
		if (got === "late") {
			stop.abort();
			return { kind: "timeout" };
		}
		text = got;
	} finally {
		clearTimeout(timer);
	}
	if (text === undefined) return { kind: "too-large" };
	if (text.length > 0) {
		try {
			return { kind: "json", message: JSON.parse(text) };
		} catch {
			// fall through: the SDK answers its parse error
		}
	}
	return {
		kind: "raw",
		request: new Request(request, { body: text }),
	};
}

/** The body as text, or undefined past `maxBytes` (a chunked body has no declared size). */
async function readLimited(
	request: Request,
	maxBytes: number,
	signal: AbortSignal,
): Promise<string | undefined> {
	if (request.body === null) return "";
	if (request.headers.has("content-length")) return request.text();
	const reader = request.body.getReader();
	signal.addEventListener("abort", () => void reader.cancel().catch(() => {}));
	const decoder = new TextDecoder();
	let received = 0;
	let text = "";
	try {
		for (;;) {
			const { done, value } = await reader.read();
			if (done) break;
			received += value.byteLength;
			if (received > maxBytes) return undefined;
			text += decoder.decode(value, { stream: true });
		}
	} finally {
		reader.releaseLock();
	}
	return text + decoder.decode();
}
