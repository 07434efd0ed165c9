/**
 * Which tool calls wait for the user, by the thread's runtime mode, as T3 asks
 * (ws-approval.jsonl: a command in `approval-required` asks with `requestKind: "command"`;
 * OBSERVED.md §22 lists `file-change` as the edit kind). `auto-accept-edits` still asks for
 * commands; `full-access` (and `auto`, where no person is asked) never asks.
 */
export type ApprovalKind = "command" | "file-change";

const ASKS = new Map<unknown, readonly ApprovalKind[]>([
	["approval-required", ["command", "file-change"]],
	["auto-accept-edits", ["command"]],
]);

export function asksApproval(
	runtimeMode: unknown,
	kind: ApprovalKind,
): boolean {
	return ASKS.get(runtimeMode)?.includes(kind) ?? false;
}
