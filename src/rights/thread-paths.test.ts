/**
 * Levels on every path (CONTRACT.md "Trust round three"), as a table over level × path × the
 * thread's runtime mode: a path held to the mode is refused exactly when the thread runs above
 * the caller's level; the others never are.
 */
import { describe, expect, test } from "bun:test";
import { fullRights } from "../config/clients.ts";
import { ACCESS_LEVELS } from "../config/types.ts";
import { rank } from "./levels.ts";
import { RightsError } from "./refusal.ts";
import {
	checkThreadPath,
	THREAD_PATHS,
	type ThreadPath,
} from "./run-limits.ts";

const HELD: ThreadPath[] = [
	"dispatch",
	"answer",
	"edit_queued",
	"promote_queued",
	"reorder_queued",
	"resume_queue",
	"retry_preparation",
];
const MODES = [
	"approval-required",
	"auto-accept-edits",
	"auto",
	"full-access",
	undefined,
] as const;

describe("levels on every path", () => {
	test("exactly the contract's paths are held to the thread's mode", () => {
		const held = Object.entries(THREAD_PATHS)
			.filter(([, h]) => h)
			.map(([p]) => p)
			.sort();
		expect(held).toEqual([...HELD].sort());
	});

	for (const level of ACCESS_LEVELS.filter((l) => l !== "read-only"))
		test(`${level}: every path × every mode as the contract says`, () => {
			const client = { ...fullRights("c", "x".repeat(16)), access: level };
			const wrong: string[] = [];
			for (const path of Object.keys(THREAD_PATHS) as ThreadPath[])
				for (const mode of MODES) {
					const refuse =
						THREAD_PATHS[path] && rank(mode ?? "full-access") > rank(level);
					let error: unknown;
					try {
						checkThreadPath(client, path, "t1", mode);
					} catch (e) {
						error = e;
					}
					const refused =
						error instanceof RightsError &&
						error.code === "runtime_mode_escalation_denied";
					if (refused !== refuse || (error && !refused))
						wrong.push(`${path} × ${mode ?? "unknown"}`);
				}
			expect(wrong).toEqual([]);
		});

	test("a dispatch's own runtime_mode within the level lowers the thread first", () => {
		const client = {
			...fullRights("c", "x".repeat(16)),
			access: "auto" as const,
		};
		expect(() =>
			checkThreadPath(client, "dispatch", "t1", "full-access", "auto"),
		).not.toThrow();
		expect(() =>
			checkThreadPath(client, "dispatch", "t1", "auto", "full-access"),
		).toThrow(/runtime_mode_escalation_denied/);
	});

	test("the server's own rights (no client) pass every path", () => {
		for (const path of HELD)
			expect(() =>
				checkThreadPath(undefined, path, "t1", "full-access"),
			).not.toThrow();
	});
});
