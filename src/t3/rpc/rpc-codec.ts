/**
 * Effect RPC JSON framing as T3 speaks it over `/ws` (PROTOCOL.md §4): encode the client's
 * Request / Ack / Interrupt / Ping, decode the server's Chunk / Exit / Defect / Pong.
 * Pure: no sockets, no timers. Decoding never throws; anything unrecognised is returned as
 * an `unknown` message so the caller can log it and carry on.
 */

export type ClientMessage =
	| {
			_tag: "Request";
			id: string;
			tag: string;
			payload: unknown;
			headers: [string, string][];
	  }
	| { _tag: "Ack"; requestId: string }
	| { _tag: "Interrupt"; requestId: string; interruptors: [] }
	| { _tag: "Ping" };

export type ServerMessage =
	| { _tag: "Chunk"; requestId: string; values: unknown[] }
	| { _tag: "Exit"; requestId: string; exit: unknown }
	| { _tag: "Defect"; defect: unknown }
	| { _tag: "Pong" }
	/** Anything else: a future `_tag`, or a frame that is not an object at all. */
	| { _tag: "unknown"; raw: unknown };

/** A decoded `exit`: success, a typed `Fail`, a `Die` defect, or an interruption. */
export type ExitResult =
	| { ok: true; value: unknown }
	| { ok: false; kind: "fail"; tag: string; message: string; error: unknown }
	| { ok: false; kind: "die"; defect: string }
	| { ok: false; kind: "interrupt" };

export function encodeRequest(
	id: string,
	tag: string,
	payload: unknown,
): string {
	const msg: ClientMessage = { _tag: "Request", id, tag, payload, headers: [] };
	return JSON.stringify(msg);
}

export function encodeAck(requestId: string): string {
	return JSON.stringify({ _tag: "Ack", requestId } satisfies ClientMessage);
}

export function encodeInterrupt(requestId: string): string {
	// `interruptors: []` is what the stock Effect client sends (captures-v2 ws-*.jsonl).
	return JSON.stringify({
		_tag: "Interrupt",
		requestId,
		interruptors: [],
	} satisfies ClientMessage);
}

export function encodePing(): string {
	return JSON.stringify({ _tag: "Ping" } satisfies ClientMessage);
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Request ids may come back as numbers from other servers; we always compare strings. */
function idOf(value: unknown): string | null {
	if (typeof value === "string") return value;
	if (typeof value === "number" || typeof value === "bigint")
		return String(value);
	return null;
}

function decodeOne(raw: unknown): ServerMessage {
	if (!isRecord(raw)) return { _tag: "unknown", raw };
	switch (raw._tag) {
		case "Chunk": {
			const requestId = idOf(raw.requestId);
			if (requestId === null) return { _tag: "unknown", raw };
			return {
				_tag: "Chunk",
				requestId,
				values: Array.isArray(raw.values) ? raw.values : [],
			};
		}
		case "Exit": {
			const requestId = idOf(raw.requestId);
			if (requestId === null) return { _tag: "unknown", raw };
			return { _tag: "Exit", requestId, exit: raw.exit };
		}
		case "Defect":
			return { _tag: "Defect", defect: raw.defect };
		case "Pong":
			return { _tag: "Pong" };
		default:
			return { _tag: "unknown", raw };
	}
}

/**
 * Decode one WebSocket text frame. A frame holds one message object or an array of them
 * (PROTOCOL.md §4.1); unparsable text yields a single `unknown` message.
 */
export function decodeFrame(text: string): ServerMessage[] {
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		return [{ _tag: "unknown", raw: text }];
	}
	if (Array.isArray(parsed)) return parsed.map(decodeOne);
	return [decodeOne(parsed)];
}

/** Render a defect (string, `{name,message}`, anything) as one readable line. */
export function defectText(defect: unknown): string {
	if (typeof defect === "string") return defect;
	if (isRecord(defect)) {
		const name = typeof defect.name === "string" ? defect.name : undefined;
		const message =
			typeof defect.message === "string" ? defect.message : undefined;
		if (name && message) return `${name}: ${message}`;
		if (message) return message;
	}
	try {
		return JSON.stringify(defect) ?? String(defect);
	} catch {
		return String(defect);
	}
}

/**
 * Decode an `exit` (PROTOCOL.md §4.3). With several cause elements a `Fail` wins over a
 * `Die`, which wins over an `Interrupt`: the typed error is the most useful to report.
 */
export function decodeExit(exit: unknown): ExitResult {
	if (!isRecord(exit))
		return {
			ok: false,
			kind: "die",
			defect: `malformed exit: ${defectText(exit)}`,
		};
	if (exit._tag === "Success") return { ok: true, value: exit.value ?? null };
	if (exit._tag !== "Failure")
		return {
			ok: false,
			kind: "die",
			defect: `unknown exit tag: ${defectText(exit._tag)}`,
		};
	const causes = Array.isArray(exit.cause)
		? exit.cause
		: isRecord(exit.cause)
			? [exit.cause]
			: [];
	const fail = causes.find((c) => isRecord(c) && c._tag === "Fail");
	if (isRecord(fail)) {
		const error = fail.error;
		const tag =
			isRecord(error) && typeof error._tag === "string"
				? error._tag
				: "UnknownError";
		const message =
			isRecord(error) && typeof error.message === "string"
				? error.message
				: defectText(error);
		return { ok: false, kind: "fail", tag, message, error };
	}
	const die = causes.find((c) => isRecord(c) && c._tag === "Die");
	if (isRecord(die))
		return { ok: false, kind: "die", defect: defectText(die.defect) };
	if (causes.some((c) => isRecord(c) && c._tag === "Interrupt"))
		return { ok: false, kind: "interrupt" };
	return {
		ok: false,
		kind: "die",
		defect: `unrecognised failure cause: ${defectText(exit.cause)}`,
	};
}
