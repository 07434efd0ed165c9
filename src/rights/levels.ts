/**
 * Room `rights/`: clients' rights (CONTRACT.md "Clients and rights"): levels, a client's reach as
 * a scoped fleet, the services as a client sees them, run limits and refusals. May import
 * `config/`, `fleet/`, `store/`, the `Services` type, the `threads/` root (its error type) and
 * `t3/model.ts`; never `mcp/`, `tools/`, `http/` or `cli/` (the MCP layer applies these).
 */
/**
 * What each access level may do, with T3 Code's own level names and order (CONTRACT.md
 * "Clients and rights"; T3's McpToolAccess, REVIEW-fa93027.md §2d): read-only reads; the three
 * middle levels also start and change threads, each run held to that level; full-access also
 * changes the environment (projects, deletion). Approvals are a right of their own (`approve`).
 */
import { ACCESS_LEVELS, type AccessLevel } from "../config/types.ts";

export const rank = (level: AccessLevel): number =>
	ACCESS_LEVELS.indexOf(level);

export const atLeast = (level: AccessLevel, needed: AccessLevel): boolean =>
	rank(level) >= rank(needed);

/** The lowest level that may call each tool (`t3_watch` with arguments: see `watchNeeds`). */
const TOOL_LEVELS: Record<string, AccessLevel> = {
	t3_machines: "read-only",
	t3_projects: "read-only",
	t3_models: "read-only",
	t3_threads: "read-only",
	t3_thread: "read-only",
	t3_wait: "read-only",
	t3_diff: "read-only",
	t3_watch: "read-only",
	t3_usage: "read-only",
	t3_dispatch: "approval-required",
	t3_answer: "approval-required",
	t3_interrupt: "approval-required",
	t3_manage: "approval-required",
	t3_delete: "full-access",
	t3_project_add: "full-access",
};

/** The level a tool needs; an unlisted tool needs full access (a new tool is closed until listed). */
export const toolNeeds = (tool: string): AccessLevel =>
	TOOL_LEVELS[tool] ?? "full-access";

/** Switching a thread's events on or off writes; listing them reads. */
export const WATCH_WRITE_LEVEL: AccessLevel = "approval-required";

/** The runtime modes T3 takes for a run, lowest first (a read-only client starts none). */
export const RUNTIME_MODES = [
	"approval-required",
	"auto-accept-edits",
	"auto",
	"full-access",
] as const;
export type RuntimeMode = (typeof RUNTIME_MODES)[number];

/** Whether a run at `mode` stays within the client's level. Unknown modes count as above it. */
export function modeWithin(level: AccessLevel, mode: string): boolean {
	const i = ACCESS_LEVELS.indexOf(mode as AccessLevel);
	return i > 0 && i <= rank(level);
}

/** The mode a new thread gets when the client gives none: its own level. */
export const defaultModeFor = (level: AccessLevel): RuntimeMode =>
	level === "read-only" ? "approval-required" : (level as RuntimeMode);
