/**
 * Reads the real pre-release server captures in test/fixtures/captures-v2 (see its README) for
 * the codec/decoder unit tests and the loopback replay server.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CAPTURES_DIR = new URL(
	"../fixtures/captures-v2/",
	import.meta.url,
);

export interface CaptureLine {
	t: number;
	dir: "send" | "recv" | "note";
	conn?: string;
	frame?: unknown;
	text?: string;
	data?: unknown;
}

/** A recorded Request and every server frame answering it (Chunks and its Exit), in order. */
export interface RecordedCall {
	conn: string;
	id: string;
	tag: string;
	payload: Record<string, unknown>;
	t: number;
	/** Server frames for this request id on this connection, with their capture time. */
	frames: { t: number; frame: Record<string, unknown> }[];
	/** Time the client interrupted it, if it did (the Exit then answers the Interrupt). */
	interruptedAt: number | null;
}

export function captureNames(): string[] {
	return readdirSync(fileURLToPath(CAPTURES_DIR))
		.filter((f) => f.startsWith("ws-") && f.endsWith(".jsonl"))
		.sort();
}

export function readCaptureJson(name: string): unknown {
	return JSON.parse(
		readFileSync(fileURLToPath(new URL(name, CAPTURES_DIR)), "utf8"),
	);
}

export function readCaptureNames(prefix: string, suffix: string): string[] {
	return readdirSync(fileURLToPath(CAPTURES_DIR))
		.filter((f) => f.startsWith(prefix) && f.endsWith(suffix))
		.sort();
}

export function loadCapture(name: string): CaptureLine[] {
	const text = readFileSync(fileURLToPath(new URL(name, CAPTURES_DIR)), "utf8");
	return text
		.split("\n")
		.filter((l) => l.trim().length > 0)
		.map((l) => JSON.parse(l) as CaptureLine);
}

function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Pair every recorded client Request with the server frames that answered it. */
export function recordedCalls(lines: CaptureLine[]): RecordedCall[] {
	const calls: RecordedCall[] = [];
	const open = new Map<string, RecordedCall>();
	for (const line of lines) {
		const conn = line.conn ?? "";
		const f = line.frame;
		if (!isRecord(f)) continue;
		if (line.dir === "send" && f._tag === "Request") {
			const call: RecordedCall = {
				conn,
				id: String(f.id),
				tag: String(f.tag),
				payload: isRecord(f.payload) ? f.payload : {},
				t: line.t,
				frames: [],
				interruptedAt: null,
			};
			calls.push(call);
			open.set(`${conn}\u0000${call.id}`, call);
		} else if (line.dir === "send" && f._tag === "Interrupt") {
			const call = open.get(`${conn}\u0000${String(f.requestId)}`);
			if (call && call.interruptedAt === null) call.interruptedAt = line.t;
		} else if (
			line.dir === "recv" &&
			(f._tag === "Chunk" || f._tag === "Exit")
		) {
			const key = `${conn}\u0000${String(f.requestId)}`;
			const call = open.get(key);
			if (!call) continue;
			call.frames.push({ t: line.t, frame: f });
			if (f._tag === "Exit") open.delete(key);
		}
	}
	return calls;
}

/** The capture's `summary` notes (what the capture script read back at the end). */
export function summaryNotes(lines: CaptureLine[]): Record<string, unknown>[] {
	return lines
		.filter(
			(l) =>
				l.dir === "note" &&
				(l.text === "summary" || l.text?.startsWith("summary ")) &&
				isRecord(l.data),
		)
		.map((l) => l.data as Record<string, unknown>);
}
