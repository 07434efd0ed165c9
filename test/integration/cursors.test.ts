/**
 * Cursors are opaque and tamper-proof (issue 16): a forged, altered, another thread's or another
 * tool's cursor given to `t3_diff` or `t3_threads` is a tool error saying "cursor is not valid;
 * call again without cursor", and nothing of it is sent to T3. A cursor still opens after a
 * restart on the same state file (its key is kept there).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { callTool, type Stack, startStack } from "../helpers/stack.ts";

const INVALID = "cursor is not valid; call again without cursor";

type Diff = { run_id: string; diff: string; next_cursor: string | null };
type List = { threads: { thread_id: string }[]; next_cursor: string | null };

let stack: Stack;
let client: Client;
const ids = { big: "", small: "", run: "" };
let diffCursor = "";
let listCursor = "";

async function done(prompt: string): Promise<string> {
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt,
	});
	expect(d.isError).toBe(false);
	const w = await callTool<{ outcome: string }>(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 20,
	});
	expect(w.data.outcome).toBe("completed");
	return d.data.thread_id;
}

beforeAll(async () => {
	stack = await startStack();
	client = await stack.client();
	ids.big = await done("big edit");
	ids.small = await done("edit a file");
	const page = await callTool<Diff>(client, "t3_diff", { thread_id: ids.big });
	expect(page.isError).toBe(false);
	ids.run = page.data.run_id;
	diffCursor = page.data.next_cursor as string;
	expect(diffCursor).toBeString();
	const list = await callTool<List>(client, "t3_threads", { limit: 1 });
	listCursor = list.data.next_cursor as string;
	expect(listCursor).toBeString();
});
afterAll(async () => {
	await stack.stop();
});

/** What this connector made before cursors were signed: plain base64url JSON. */
const unsigned = (body: unknown) =>
	Buffer.from(JSON.stringify(body)).toString("base64url");

/** The cursor's body changed, its signature kept. */
function altered(
	cursor: string,
	change: (body: Record<string, unknown>) => void,
) {
	const [payload, signature] = cursor.split(".") as [string, string];
	const body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
	change(body);
	return `${unsigned(body)}.${signature}`;
}

/** The signature with one character changed. */
function resigned(cursor: string): string {
	const at = cursor.length - 3;
	const swap = cursor[at] === "A" ? "B" : "A";
	return `${cursor.slice(0, at)}${swap}${cursor.slice(at + 1)}`;
}

const diffRpcs = () => {
	const r = stack.sim().stats().requests;
	return (
		(r["orchestration.getTurnDiff"] ?? 0) +
		(r["orchestration.getFullThreadDiff"] ?? 0)
	);
};

describe("t3_diff", () => {
	const cases: [string, () => Record<string, unknown>][] = [
		[
			"a forged negative offset",
			() => ({
				thread_id: ids.big,
				cursor: unsigned({
					t: ids.big,
					r: ids.run,
					w: false,
					f: null,
					n: 1,
					o: -5,
				}),
			}),
		],
		[
			"a forged out-of-range page",
			() => ({
				thread_id: ids.big,
				cursor: unsigned({
					t: ids.big,
					r: ids.run,
					w: false,
					f: null,
					n: 99,
					o: 0,
				}),
			}),
		],
		[
			"a forged offset in the middle of a line",
			() => ({
				thread_id: ids.big,
				cursor: unsigned({
					t: ids.big,
					r: ids.run,
					w: false,
					f: null,
					n: 1,
					o: 17,
				}),
			}),
		],
		[
			"an altered offset",
			() => ({
				thread_id: ids.big,
				cursor: altered(diffCursor, (b) => {
					b.o = (b.o as number) + 7;
				}),
			}),
		],
		[
			"an altered range",
			() => ({
				thread_id: ids.big,
				cursor: altered(diffCursor, (b) => {
					b.n = 7;
				}),
			}),
		],
		[
			"an altered signature",
			() => ({ thread_id: ids.big, cursor: resigned(diffCursor) }),
		],
		[
			"another thread's cursor",
			() => ({ thread_id: ids.small, cursor: diffCursor }),
		],
		[
			"the cursor retargeted at another thread",
			() => ({
				thread_id: ids.small,
				cursor: altered(diffCursor, (b) => {
					b.t = ids.small;
				}),
			}),
		],
		["a t3_threads cursor", () => ({ thread_id: ids.big, cursor: listCursor })],
		["junk", () => ({ thread_id: ids.big, cursor: "not-a-cursor" })],
	];
	for (const [name, args] of cases) {
		test(`${name}: refused, nothing sent to T3`, async () => {
			const before = diffRpcs();
			const result = await callTool(client, "t3_diff", args());
			expect(result.isError).toBe(true);
			expect(result.text).toContain(INVALID);
			expect(diffRpcs()).toBe(before);
		});
	}

	test("the cursor it made reads the next page", async () => {
		const next = await callTool<Diff>(client, "t3_diff", {
			thread_id: ids.big,
			cursor: diffCursor,
		});
		expect(next.isError).toBe(false);
		expect(next.data.diff.length).toBeGreaterThan(0);
	});
});

describe("t3_threads", () => {
	const cases: [string, () => Record<string, unknown>][] = [
		[
			"a forged position",
			() => ({
				limit: 1,
				cursor: unsigned({
					f: JSON.stringify([null, null, "all", "", false]),
					u: "",
					t: ids.big,
				}),
			}),
		],
		[
			"an altered position",
			() => ({
				limit: 1,
				cursor: altered(listCursor, (b) => {
					b.u = "9999-01-01T00:00:00.000Z";
				}),
			}),
		],
		[
			"altered filters",
			() => ({
				limit: 1,
				query: "edit",
				cursor: altered(listCursor, (b) => {
					b.f = JSON.stringify([null, null, "all", "edit", false]);
				}),
			}),
		],
		[
			"an altered signature",
			() => ({ limit: 1, cursor: resigned(listCursor) }),
		],
		[
			"the cursor with other filters",
			() => ({ limit: 1, query: "edit", cursor: listCursor }),
		],
		["a t3_diff cursor", () => ({ limit: 1, cursor: diffCursor })],
		["junk", () => ({ cursor: "e30" })],
	];
	for (const [name, args] of cases) {
		test(`${name}: refused`, async () => {
			const result = await callTool(client, "t3_threads", args());
			expect(result.isError).toBe(true);
			expect(result.text).toContain(INVALID);
		});
	}

	test("the cursor it made reads the next page", async () => {
		const next = await callTool<List>(client, "t3_threads", {
			limit: 1,
			cursor: listCursor,
		});
		expect(next.isError).toBe(false);
		expect(next.data.threads).toHaveLength(1);
	});
});

test("cursors still open after a restart on the same state file", async () => {
	await stack.restartServer();
	client = await stack.client();
	const list = await callTool<List>(client, "t3_threads", {
		limit: 1,
		cursor: listCursor,
	});
	expect(list.isError).toBe(false);
	const diff = await callTool<Diff>(client, "t3_diff", {
		thread_id: ids.big,
		cursor: diffCursor,
	});
	expect(diff.isError).toBe(false);
});
