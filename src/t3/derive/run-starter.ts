/**
 * Whether T3 itself started a run (released 0.1.x wake runs: background notifications, delegated
 * task results, restart and usage-limit continuations) rather than a person or a client. Those
 * runs' user messages come from the server (`creationSource: "server"`, as upstream's limit-resume
 * worker sends them) or carry what they continue (`notification`, `delegatedCompletion`, the
 * `*ContinuationOfRunId` fields); wake run rows carry `workStartedAt` or `restartContinuationOfRunId`.
 */
import type { Run, ThreadProjection } from "../model.ts";

const SERVER_SOURCES: ReadonlySet<string> = new Set(["server", "provider"]);
const WAKE_MESSAGE_FIELDS = [
	"notification",
	"delegatedCompletion",
	"usageLimitContinuationOfRunId",
	"restartContinuationOfRunId",
] as const;
const WAKE_RUN_FIELDS = [
	"restartContinuationOfRunId",
	"workStartedAt",
	"delegatedCompletion",
] as const;

export function startedByT3(projection: ThreadProjection, run: Run): boolean {
	if (WAKE_RUN_FIELDS.some((key) => run[key] != null)) return true;
	const id = run.userMessageId;
	if (id === null) return false;
	const message =
		projection.messages.find((m) => m.id === id) ??
		projection.turnItems.find(
			(i) => i.messageId === id || i.id === `turn-item:message:${id}`,
		);
	if (!message) return false;
	if (WAKE_MESSAGE_FIELDS.some((key) => message[key] != null)) return true;
	if (message.type === "notification") return true;
	return (
		(typeof message.creationSource === "string" &&
			SERVER_SOURCES.has(message.creationSource)) ||
		message.createdBy === "system"
	);
}
