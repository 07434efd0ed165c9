/**
 * What a wait that ended returns: `t3_wait`'s result, and `t3_dispatch`'s with `wait`. Shared
 * by the blocking calls and by a task when it completes (tools/task-results.ts), and kept apart
 * from the tools' schemas so that shaping a task's result loads no MCP or zod code at start.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { ok } from "../../mcp/result.ts";
import type { WaitReport } from "../../threads/wait/wait.ts";

const TIMEOUT_NOTE =
	"Timed out waiting; the run was not interrupted and keeps going. Call t3_wait again to keep waiting.";

/** The tool result of a wait that ended (the blocking call's, and a task's when it completes). */
export function waitToolResult({
	note,
	progress,
	...result
}: WaitReport): CallToolResult {
	const said =
		note ?? (result.outcome === "timeout" ? TIMEOUT_NOTE : undefined);
	// A timeout also says how the run stands: elapsed since its start, its current step.
	return ok(result, progress && said ? `${said}\nNow: ${progress}.` : said);
}

/** Whether a first look settled the wait (a held queue's "timeout" says waiting changes nothing). */
export const settledAtOnce = (report: WaitReport) =>
	report.outcome !== "timeout" || report.note !== undefined;

/** The result of a dispatch that waited (the blocking call's, and a task's when it completes). */
export function dispatchWaitResult(
	base: Record<string, unknown>,
	report: WaitReport,
): CallToolResult {
	const waited = waitToolResult(report);
	const data = { ...base, wait: waited.structuredContent ?? null };
	return ok(
		data,
		waited.content
			.slice(1)
			.map((c) => (c.type === "text" ? c.text : ""))
			.join("\n") || undefined,
	);
}
