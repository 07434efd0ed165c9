import { describe, expect, test } from "bun:test";
import { createLineReader, leadingId } from "./stdio-framing.ts";

function read(chunks: (string | Uint8Array)[], maxLineBytes?: number) {
	const seen: (string | { oversize: string; bytes: number })[] = [];
	const reader = createLineReader({
		maxLineBytes,
		onLine: (l) => seen.push(l),
		onOversize: (head, bytes) => seen.push({ oversize: head, bytes }),
	});
	const enc = new TextEncoder();
	for (const c of chunks)
		reader.push(typeof c === "string" ? enc.encode(c) : c);
	reader.end();
	return seen;
}

describe("createLineReader", () => {
	test("lines across chunk boundaries, CRLF, NUL as a separator, a last line without newline", () => {
		expect(read(["ab", "c\r\nd", "e\0f\n\ng"])).toEqual([
			"abc",
			"de",
			"f",
			"g",
		]);
	});

	test("a line over the limit is reported with its head and length; the next line reads normally", () => {
		expect(read(["0123", "456789", "ab\nok\n"], 8)).toEqual([
			{ oversize: "0123456789ab", bytes: 12 },
			"ok",
		]);
	});

	test("multi-byte characters split between chunks decode whole", () => {
		const bytes = new TextEncoder().encode("é€\n");
		expect(
			read([bytes.subarray(0, 1), bytes.subarray(1, 4), bytes.subarray(4)]),
		).toEqual(["é€"]);
	});
});

describe("leadingId", () => {
	test("the top-level id, not one nested in params or a value spelled id", () => {
		expect(leadingId('{"jsonrpc":"2.0","id":42,"method":"x"')).toBe(42);
		expect(leadingId('{"method":"id","id":"a\\"b"')).toBe('a"b');
		expect(leadingId('{"params":{"id":1},"id":2')).toBe(2);
		expect(leadingId('{"params":{"id":1}, "x": "aaaa')).toBeUndefined();
		expect(leadingId('{"id":true}')).toBeUndefined();
	});
});
