/**
 * The rights of a tool call (CONTRACT.md "Clients and rights"), over MCP and in the console,
 * checked before the handler runs, so a refused call sends nothing to T3: the tool's level (`capability_denied`), and the
 * approver right for `t3_answer` with a `decision`. Then the audit row of every call that
 * changes something, allowed or refused: who, which tool, where, and the result code.
 */
import type { ClientConfig } from "../config/types.ts";
import type { AuditRow, AuditVia } from "../store/audit.ts";
import { atLeast, toolNeeds, WATCH_WRITE_LEVEL } from "./levels.ts";
import { RightsError, whoIs } from "./refusal.ts";

/**
 * A tool's result as far as rights look at it (the MCP `CallToolResult`, without importing the
 * MCP layer: the console reads and acts through these rules too).
 */
export interface CallToolResult {
	content: unknown[];
	structuredContent?: unknown;
	isError?: boolean;
}

const CHANGES = new Set([
	"t3_dispatch",
	"t3_answer",
	"t3_interrupt",
	"t3_manage",
	"t3_delete",
	"t3_project_add",
]);

type Args = Record<string, unknown>;

const watchWrites = (args: Args) =>
	args.thread_id !== undefined || args.enabled !== undefined;

/** Whether the call is one the audit records. */
export const isAudited = (tool: string, args: Args): boolean =>
	CHANGES.has(tool) || (tool === "t3_watch" && watchWrites(args));

/** Whether a client may see the tool in `tools/list` at all (an approver sees `t3_answer`). */
export const mayList = (client: ClientConfig, tool: string): boolean =>
	atLeast(client.access, toolNeeds(tool)) ||
	(tool === "t3_answer" && client.approve);

/** The refusal of this call for the client's rights, or undefined when it may go on. */
export function refusal(
	client: ClientConfig,
	tool: string,
	args: Args,
): RightsError | undefined {
	const approval = tool === "t3_answer" && args.decision !== undefined;
	if (approval && !client.approve)
		return new RightsError(
			"approval_denied",
			`answering an approval (decision) needs the approve right; ${whoIs(client)} does not have it. An approver client (approve = true) must answer it; the question stays pending.`,
		);
	// Approving is its own right, whatever the level: a person's read-only client may approve.
	if (approval) return undefined;
	const needed =
		tool === "t3_watch" && watchWrites(args)
			? WATCH_WRITE_LEVEL
			: toolNeeds(tool);
	if (!atLeast(client.access, needed))
		return new RightsError(
			"capability_denied",
			`${tool}${tool === "t3_watch" ? " with thread_id" : ""} needs access ${needed} or above; ${whoIs(client)} may not call it. Ask the operator for a client with that access.`,
		);
	return undefined;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** What the audit names of the call itself: an approval's decision, a `t3_manage` action. */
const detailOf = (tool: string, args: Args): string | null =>
	tool === "t3_answer"
		? str(args.decision)
		: tool === "t3_manage"
			? str(args.action)
			: null;

/** The audit row of a finished call: where from its arguments and result, never their texts. */
export function auditRow(
	client: ClientConfig,
	tool: string,
	args: Args,
	outcome: { result: CallToolResult } | { code: string },
	at: number,
	via: AuditVia,
): AuditRow {
	const data =
		"result" in outcome
			? ((outcome.result.structuredContent ?? {}) as Record<string, unknown>)
			: {};
	const project = data.project as Record<string, unknown> | undefined;
	const latest = data.latest_run as Record<string, unknown> | undefined;
	return {
		at,
		client: client.name,
		tool,
		machine: str(args.machine) ?? str(data.machine),
		project_id:
			str(project?.id) ??
			(tool === "t3_project_add" ? str(data.project_id) : null),
		thread_id: str(args.thread_id) ?? str(data.thread_id),
		run_id: str(data.run_id) ?? str(latest?.id),
		result:
			"code" in outcome
				? outcome.code
				: outcome.result.isError
					? "error"
					: "ok",
		idempotency_key: str(args.idempotency_key) ?? str(args.request_id),
		detail: detailOf(tool, args),
		via,
	};
}

/**
 * The questions a client may not answer, by kind, with the reason it is told (CONTRACT.md
 * "Trust round three"): approvals without the approve right, `user_input` questions at
 * read-only. Empty for a client that may answer every kind.
 */
function closedKinds(client: ClientConfig): Map<string, string> {
	const closed = new Map<string, string>();
	if (!client.approve)
		closed.set(
			"approval",
			`An approval: client "${client.name}" may not answer it (it lacks the approve right). An approver client must answer it with t3_answer decision, or a person in T3.`,
		);
	if (client.access === "read-only")
		closed.set(
			"user_input",
			`A question: client "${client.name}" may not answer it (access read-only). A client above read-only must answer it with t3_answer answers, or a person in T3.`,
		);
	return closed;
}

/** Whether an answerable question of a closed kind is anywhere in the value (no copy made). */
function holdsClosed(value: unknown, closed: Map<string, string>): boolean {
	if (Array.isArray(value)) return value.some((v) => holdsClosed(v, closed));
	if (value === null || typeof value !== "object") return false;
	const record = value as Record<string, unknown>;
	if (record.answerable === true && closed.has(String(record.kind)))
		return true;
	for (const key in record) if (holdsClosed(record[key], closed)) return true;
	return false;
}

/**
 * Every question in a result that the client may not answer shows `answerable: false` with a
 * reason saying who must answer (the question stays pending for them). Other results pass
 * untouched.
 */
export function forClient<R extends CallToolResult>(
	client: ClientConfig,
	result: R,
): R {
	const closed = closedKinds(client);
	if (closed.size === 0 || !result.structuredContent) return result;
	// Looked for before anything is copied: most results hold no such question, and a copy of
	// a 500-row answer at every call was garbage for nothing.
	if (!holdsClosed(result.structuredContent, closed)) return result;
	let changed = false;
	const walk = (value: unknown): unknown => {
		if (Array.isArray(value)) return value.map(walk);
		if (value === null || typeof value !== "object") return value;
		const record = value as Record<string, unknown>;
		const out: Record<string, unknown> = {};
		for (const [key, v] of Object.entries(record)) out[key] = walk(v);
		const reason = closed.get(String(record.kind));
		if (record.answerable === true && reason !== undefined) {
			out.answerable = false;
			out.reason = reason;
			changed = true;
		}
		return out;
	};
	const structured = walk(result.structuredContent) as Record<string, unknown>;
	if (!changed) return result;
	const [first, ...rest] = result.content;
	return {
		...result,
		structuredContent: structured,
		content:
			(first as { type?: unknown } | undefined)?.type === "text"
				? [{ type: "text", text: JSON.stringify(structured) }, ...rest]
				: result.content,
	};
}
