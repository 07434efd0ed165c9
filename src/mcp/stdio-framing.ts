/**
 * Splits MCP stdio input into lines without ever holding more than the size limit: a line over
 * it is counted and dropped as it streams by (its first bytes kept, for the request id), then
 * reported, and reading goes on with the next line. A NUL ends a line too: JSON cannot contain a
 * raw NUL, so one after a message (some clients pad with it) must not glue the message to what
 * follows. Pure: bytes in, callbacks out.
 */

/** The SDK's stdio default: 10 MiB. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** Bytes of an oversized line kept to find its `id`. */
const HEAD_BYTES = 4096;

export interface LineReaderOptions {
	maxLineBytes?: number;
	/** A complete line, without its separator or a trailing CR (empty lines are skipped). */
	onLine(line: string): void;
	/** A line longer than the limit: its first bytes (decoded) and its full length. */
	onOversize(head: string, bytes: number): void;
}

export interface LineReader {
	push(chunk: Uint8Array): void;
	/** End of input: a last line without a newline still counts. */
	end(): void;
}

const NEWLINE = 0x0a;
const NUL = 0x00;

export function createLineReader(options: LineReaderOptions): LineReader {
	const max = options.maxLineBytes ?? MAX_LINE_BYTES;
	let parts: Uint8Array[] = [];
	let size = 0;
	let head: Uint8Array | undefined; // set once the line is over the limit

	const take = (piece: Uint8Array) => {
		if (piece.length === 0) return;
		if (head === undefined && size + piece.length > max) {
			head = prefix([...parts, piece], HEAD_BYTES);
			parts = [];
		} else if (head === undefined) parts.push(piece);
		else if (head.length < HEAD_BYTES) head = prefix([head, piece], HEAD_BYTES);
		size += piece.length;
	};
	const finish = () => {
		if (head !== undefined)
			options.onOversize(new TextDecoder().decode(head), size);
		else if (size > 0)
			options.onLine(
				new TextDecoder().decode(concat(parts)).replace(/\r$/, ""),
			);
		parts = [];
		size = 0;
		head = undefined;
	};

	return {
		push(chunk) {
			let start = 0;
			// Found once per chunk, not once per line: a chunk without NUL is scanned for it once.
			let nul = chunk.indexOf(NUL);
			for (;;) {
				if (nul !== -1 && nul < start) nul = chunk.indexOf(NUL, start);
				const newline = chunk.indexOf(NEWLINE, start);
				const end =
					newline === -1 ? nul : nul === -1 ? newline : Math.min(newline, nul);
				if (end === -1) {
					take(chunk.subarray(start));
					return;
				}
				take(chunk.subarray(start, end));
				finish();
				start = end + 1;
			}
		},
		end() {
			finish();
		},
	};
}

/** The first `n` bytes of the parts, joined. */
function prefix(parts: Uint8Array[], n: number): Uint8Array {
	const taken: Uint8Array[] = [];
	let left = n;
	for (const p of parts) {
		if (left <= 0) break;
		taken.push(p.subarray(0, left));
		left -= p.length;
	}
	return concat(taken);
}

function concat(parts: Uint8Array[]): Uint8Array {
	if (parts.length === 1) return parts[0] as Uint8Array;
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of parts) {
		out.set(p, at);
		at += p.length;
	}
	return out;
}

/**
 * The top-level `id` of a JSON object from its first bytes, when it is there (clients write
 * `{"jsonrpc":"2.0","id":…` first): a refusal can then name the request it refuses. Scans
 * strings and nesting so an `"id"` inside `params` is not mistaken for it.
 */
export function leadingId(text: string): string | number | undefined {
	let depth = 0;
	let i = 0;
	const n = text.length;
	while (i < n) {
		const c = text[i] as string;
		if (c === '"') {
			const end = stringEnd(text, i);
			if (end === -1) return undefined;
			if (depth === 1 && text.slice(i, end + 1) === '"id"') {
				const rest = text
					.slice(end + 1)
					.match(/^\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")/);
				// A key (followed by ":"), not a value that happens to be "id".
				if (rest?.[1] !== undefined) {
					try {
						const id = JSON.parse(rest[1]) as unknown;
						if (typeof id === "string" || typeof id === "number") return id;
					} catch {
						return undefined;
					}
				}
			}
			i = end + 1;
			continue;
		}
		if (c === "{" || c === "[") depth++;
		else if (c === "}" || c === "]") depth--;
		i++;
	}
	return undefined;
}

/** Index of the closing quote of the string opening at `start`, or -1 when it is cut. */
function stringEnd(text: string, start: number): number {
	for (let i = start + 1; i < text.length; i++) {
		if (text[i] === "\\") i++;
		else if (text[i] === '"') return i;
	}
	return -1;
}
