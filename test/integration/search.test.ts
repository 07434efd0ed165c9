/**
 * `t3_threads` `query` through T3's message search (`orchestration.searchThreads`): a word only
 * in an old message finds its thread with `match`, merged with the title / latest-message match
 * and paged by the same cursor; never a hidden project's thread; a pre-release machine keeps
 * the local match silently; a machine that does not answer in time goes under `unavailable`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import {
	callTool,
	launchOnSim,
	type Stack,
	startStack,
} from "../helpers/stack.ts";

type Row = {
	thread_id: string;
	machine: string;
	title: string;
	archived: boolean;
	match: { role: string; snippet: string } | null;
};
type ThreadList = {
	threads: Row[];
	next_cursor: string | null;
	unavailable: { machine: string; state: string; reason: string | null }[];
};

let stack: Stack;
let client: Client;
const ids = {} as Record<
	"first" | "second" | "hidden" | "oldTitled" | "oldMention",
	string
>;

async function run(args: Record<string, unknown>): Promise<string> {
	const d = await callTool<{ thread_id: string }>(client, "t3_dispatch", args);
	expect(d.isError).toBe(false);
	const w = await callTool<{ outcome: string }>(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 20,
	});
	expect(w.data.outcome).toBe("completed");
	return d.data.thread_id;
}

/** A thread whose first message holds `word` and whose title and latest message do not. */
async function oldMention(machine: string, title: string, word: string) {
	const id = await run({
		machine,
		project: "demo",
		title,
		prompt: `remember the ${word} for later`,
	});
	await run({ thread_id: id, prompt: "say hi" });
	return id;
}

const list = (args: Record<string, unknown> = {}) =>
	callTool<ThreadList>(client, "t3_threads", args);

/** `orchestration.searchThreads` requests the sim received while recording. */
function searchRequests(machine: string): number {
	return stack
		.sim(machine)
		.frames()
		.filter((f) => f.dir === "recv")
		.flatMap((f) => (Array.isArray(f.frame) ? f.frame : [f.frame]))
		.filter(
			(m) =>
				(m as { _tag?: string; tag?: string } | null)?.tag ===
				"orchestration.searchThreads",
		).length;
}

beforeAll(async () => {
	stack = await startStack({
		machines: [
			{
				name: "a",
				sim: {
					projects: [
						{ title: "demo", workspaceRoot: "/srv/t3/demo" },
						{ title: "secret", workspaceRoot: "/srv/t3/secret" },
					],
				},
				projects: ["demo"],
			},
			{ name: "old", sim: { compat: "prerelease" }, projects: ["demo"] },
		],
		searchTimeoutMs: 300,
	});
	client = await stack.client();
	ids.first = await oldMention("a", "first chat", "quokka");
	ids.second = await oldMention("a", "second chat", "quokka");
	ids.hidden = await launchOnSim(stack.sim("a"), "secret", "quokka hidden");
	// On the pre-release machine only a title can match.
	ids.oldTitled = await run({
		machine: "old",
		project: "demo",
		title: "quokka notes",
		prompt: "say hi",
	});
	ids.oldMention = await oldMention("old", "third chat", "quokka");
});
afterAll(async () => {
	await stack.stop();
});

describe("t3_threads query through T3's message search", () => {
	test("finds a word only in an old message, with match {role, snippet}; never a hidden project's thread; a pre-release machine keeps the title match silently", async () => {
		const { data, isError } = await list({ query: "QUOKKA" });
		expect(isError).toBe(false);
		expect(data.threads.map((t) => t.thread_id)).toEqual([
			ids.oldTitled,
			ids.second,
			ids.first,
		]);
		const first = data.threads.find((t) => t.thread_id === ids.first);
		expect(first?.title).toBe("first chat");
		// The newest message holding it: the sim's answer echoes the prompt.
		expect(first?.match).toEqual({
			role: "assistant",
			snippet:
				"Hello from the T3 simulator. You said: remember the quokka for later",
		});
		expect(
			data.threads.find((t) => t.thread_id === ids.oldTitled)?.match,
		).toBeNull();
		expect(data.threads.map((t) => t.thread_id)).not.toContain(ids.hidden);
		expect(data.threads.map((t) => t.thread_id)).not.toContain(ids.oldMention);
		expect(data.unavailable).toEqual([]);
	});

	test("pages across search results with next_cursor", async () => {
		const seen: Row[] = [];
		let cursor: string | null = null;
		for (let page = 0; page < 5; page += 1) {
			const { data, isError }: { data: ThreadList; isError: boolean } =
				await list({
					query: "quokka",
					limit: 1,
					...(cursor ? { cursor } : {}),
				});
			expect(isError).toBe(false);
			seen.push(...data.threads);
			cursor = data.next_cursor;
			if (!cursor) break;
		}
		expect(seen.map((t) => t.thread_id)).toEqual([
			ids.oldTitled,
			ids.second,
			ids.first,
		]);
		expect(seen.map((t) => t.match?.role ?? null)).toEqual([
			null,
			"assistant",
			"assistant",
		]);
	});

	test("a query under 2 characters after trimming is refused before T3's search; search still finds words afterwards", async () => {
		const sim = stack.sim("a");
		sim.record(true);
		try {
			for (const query of [" q ", "q", "   "]) {
				const refused = await list({ query });
				expect(refused.isError, query).toBe(true);
				expect(refused.text).toStartWith("query: ");
				expect(refused.text).toContain("after trimming; expected 2–200");
			}
			expect(searchRequests("a")).toBe(0);
			await list({ query: "unseen words" });
			expect(searchRequests("a")).toBe(1);
		} finally {
			sim.record(false);
		}
	});

	test("a machine whose search does not answer in time goes under unavailable; the call still lists", async () => {
		const sim = stack.sim("a");
		sim.setDelay(2_000);
		try {
			const { data, isError } = await list({ query: "quokka notes" });
			expect(isError).toBe(false);
			expect(data.threads.map((t) => t.thread_id)).toEqual([ids.oldTitled]);
			expect(data.unavailable).toEqual([
				{
					machine: "a",
					state: "online",
					reason: expect.stringContaining("message search"),
				},
			]);
		} finally {
			sim.setDelay(0);
		}
	});

	test("an archived thread T3's search finds is listed only with archived: true", async () => {
		const archived = await callTool(client, "t3_manage", {
			thread_id: ids.first,
			action: "archive",
		});
		expect(archived.isError).toBe(false);
		const active = await list({ query: "quokka" });
		expect(active.data.threads.map((t) => t.thread_id)).toEqual([
			ids.oldTitled,
			ids.second,
		]);
		const { data } = await list({ query: "quokka", archived: true });
		expect(data.threads.map((t) => [t.thread_id, t.archived])).toEqual([
			[ids.first, true],
		]);
		expect(data.threads[0]?.match?.snippet).toContain("quokka");
	});
});
