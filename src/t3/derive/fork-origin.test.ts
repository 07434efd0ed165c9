import { describe, expect, test } from "bun:test";
import type { ThreadProjection, ThreadShell } from "../model.ts";
import { forkOrigin, inheritedMessages } from "./fork-origin.ts";

const shell = (over: Record<string, unknown>) =>
	({ id: "fork", projectId: "p", ...over }) as unknown as ThreadShell;

describe("forkOrigin", () => {
	test("T3's typed forkedFrom (idx 69176170854), else lineage without a run, else none", () => {
		expect(
			forkOrigin(
				shell({ forkedFrom: { type: "run", threadId: "src", runId: "r2" } }),
			),
		).toEqual({ thread_id: "src", run_id: "r2" });
		expect(
			forkOrigin(
				shell({
					forkedFrom: null,
					lineage: { parentThreadId: "src", relationshipToParent: "fork" },
				}),
			),
		).toEqual({ thread_id: "src", run_id: null });
		// A subagent's parent is no fork source.
		expect(
			forkOrigin(
				shell({
					forkedFrom: null,
					lineage: { parentThreadId: "src", relationshipToParent: "subagent" },
				}),
			),
		).toBeNull();
		expect(forkOrigin(shell({ forkedFrom: null }))).toBeNull();
	});
});

describe("inheritedMessages", () => {
	const row = (visibility: string, item: Record<string, unknown>) => ({
		position: 0,
		visibility,
		sourceThreadId: "src",
		sourceItemId: String(item.id),
		item,
	});
	const message = (id: string, runId: string, type: string, text: string) => ({
		id,
		runId,
		type,
		text,
	});
	const projection = {
		visibleTurnItems: [
			row("inherited", message("u1", "r1", "user_message", "first")),
			row("inherited", message("a1", "r1", "assistant_message", "one")),
			row("inherited", { id: "c1", runId: "r1", type: "command_execution" }),
			row("inherited", message("u2", "r2", "user_message", "second")),
			row("inherited", {
				...message("a2", "r2", "assistant_message", "dra"),
				streaming: true,
			}),
			row("inherited", message("a3", "r2", "assistant_message", "two")),
			row("synthetic", { id: "marker", runId: null, type: "fork" }),
			row("local", message("u3", "own", "user_message", "mine")),
			"not a row",
			{ visibility: "inherited", item: null },
		],
	} as unknown as ThreadProjection;

	test("the inherited message items only, oldest first; drafts, tools, the marker and own rows left out", () => {
		expect(inheritedMessages(projection, 20)).toEqual([
			{ role: "user", text: "first" },
			{ role: "assistant", text: "one" },
			{ role: "user", text: "second" },
			{ role: "assistant", text: "two" },
		]);
	});

	test("the last `turns` inherited runs, as t3_thread shows a thread's own runs", () => {
		expect(inheritedMessages(projection, 1)).toEqual([
			{ role: "user", text: "second" },
			{ role: "assistant", text: "two" },
		]);
		expect(inheritedMessages({} as unknown as ThreadProjection, 5)).toEqual([]);
	});
});
