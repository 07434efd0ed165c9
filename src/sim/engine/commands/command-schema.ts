/**
 * Room `sim/engine/commands/`: one file per family of `dispatchCommand` commands (thread, message,
 * run, request, launch), each a handler over the engine core; this file is how a command is
 * decoded first. May import the engine core, `sim/runs` and `sim/agent`.
 */
/**
 * How the engine decodes what it is sent, as Effect Schema would (OBSERVED.md §5.8): the keys
 * each command and `launchThread` require, the commands an older engine lacks (compat.ts),
 * and the defect text a payload that does not decode dies with.
 */
import { DELIVERY_INTENTS } from "../../agent/steering.ts";
import { type SimCompat, type SimFeature, simHas } from "../../compat.ts";
import { FORK_REQUIRED } from "../thread-fork.ts";

const REQUIRED: Record<string, string[]> = {
	"thread.create": [
		"commandId",
		"threadId",
		"projectId",
		"createdBy",
		"creationSource",
		"title",
		"modelSelection",
		"runtimeMode",
		"interactionMode",
		"branch",
		"worktreePath",
	],
	"message.dispatch": [
		"commandId",
		"threadId",
		"createdBy",
		"creationSource",
		"messageId",
		"text",
		"attachments",
		"dispatchMode",
	],
	"run.interrupt": ["commandId", "threadId", "runId"],
	"runtime-request.respond": ["commandId", "threadId", "requestId"],
	"thread.user-input.dismiss": ["commandId", "threadId", "requestId"],
	"thread.runtime-mode.set": ["commandId", "threadId", "runtimeMode"],
	"thread.interaction-mode.set": ["commandId", "threadId", "interactionMode"],
	"thread.model-selection.set": ["commandId", "threadId", "modelSelection"],
	"thread.metadata.update": ["commandId", "threadId"],
	"thread.archive": ["commandId", "threadId"],
	"thread.unarchive": ["commandId", "threadId"],
	"thread.delete": ["commandId", "threadId"],
	"thread.settle": ["commandId", "threadId"],
	"thread.unsettle": ["commandId", "threadId", "reason"],
	"provider-session.detach": ["commandId", "threadId", "providerSessionId"],
	"queue.resume": ["commandId", "threadId"],
	"queued-run.cancel": ["commandId", "threadId", "runId"],
	"thread.snooze": ["commandId", "threadId", "snoozedUntil"],
	"thread.unsnooze": ["commandId", "threadId", "reason"],
	"thread.pin": ["commandId", "threadId"],
	"thread.unpin": ["commandId", "threadId"],
	"thread.mark-unread": ["commandId", "threadId"],
	"queued-run.reorder": ["commandId", "threadId", "runId", "beforeRunId"],
	"queued-message.promote-to-steer": [
		"commandId",
		"threadId",
		"queuedRunId",
		"targetRunId",
	],
	"queued-run.edit": ["commandId", "threadId", "runId", "text"],
	"thread.fork": FORK_REQUIRED,
	"prepared-run.retry": ["commandId", "threadId", "runId"],
};
/** Commands the pre-release engine does not know (compat.ts): it dies on them. */
const NEWER_COMMANDS: Record<string, SimFeature> = {
	"thread.fork": "threadFork",
	"prepared-run.retry": "preparedRunRetry",
	"queued-run.edit": "queuedRunEdit",
	// The pre-release has reorder and promote, and snooze, but no pins nor read state
	// (OBSERVED.md §6.4 items 15 and 17).
	"thread.pin": "threadPins",
	"thread.unpin": "threadPins",
	"thread.mark-unread": "markUnread",
};
export const LAUNCH_REQUIRED = [
	"commandId",
	"projectId",
	"title",
	"modelSelection",
	"runtimeMode",
	"interactionMode",
	"workspaceStrategy",
];

/** Effect Schema's rendering of a missing property (OBSERVED.md §5.8). */
export function missingKey(
	payload: Record<string, unknown>,
	keys: string[],
): string | undefined {
	const key = keys.find((k) => !(k in payload) || payload[k] === undefined);
	return key === undefined ? undefined : `Missing key\n  at ["${key}"]`;
}

const unionText = `Expected ${Object.keys(REQUIRED)
	.map((type) => `{ readonly "type": "${type}", ... }`)
	.join(" | ")}`;

/** The defect a `dispatchCommand` payload dies with before it runs, or undefined if it decodes. */
export function commandDefect(
	c: Record<string, unknown>,
	type: string,
	compat: SimCompat,
	queueHolding: boolean,
): string | undefined {
	const newer = NEWER_COMMANDS[type];
	const required =
		(type === "queue.resume" && !queueHolding) ||
		(newer !== undefined && !simHas(compat, newer))
			? undefined
			: REQUIRED[type];
	if (!required) return unionText;
	const missing = missingKey(c, required);
	if (missing) return missing;
	// Decoded like any literal field: an unknown value dies before the command runs.
	if (
		type === "message.dispatch" &&
		simHas(compat, "deliveryIntent") &&
		c.deliveryIntent !== undefined &&
		!(DELIVERY_INTENTS as readonly unknown[]).includes(c.deliveryIntent)
	)
		return `Expected ${DELIVERY_INTENTS.map((i) => `"${i}"`).join(" | ")}, got ${JSON.stringify(c.deliveryIntent)}\n  at ["deliveryIntent"]`;
	return undefined;
}
