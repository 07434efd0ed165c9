/**
 * Messages into a run that is still going (PROTOCOL.md §6.3): `steer_active` adds the
 * message to the running run (a `user_message` item with `inputIntent: "steer"`), and
 * `restart_active` interrupts the current attempt and starts a new attempt of the same run
 * (`reason: "steering_restart"`) with the new message as its prompt. Every user message
 * carries the run it was steered into (§7.3 ConversationMessage).
 */
import { pickScript } from "../agent/agent.ts";
import { nowIso } from "../engine/rows.ts";
import { closePendingRequests, driveRun } from "./run-lifecycle.ts";
import {
	addItem,
	put,
	type RunHandle,
	type RunKit,
	setAttempt,
	setProviderTurn,
	setRun,
	startNewAttempt,
} from "./run-rows.ts";

export interface SteerMessage {
	messageId: string;
	text: string;
	createdBy: string;
	creationSource: string;
	/** `"promoted_queued_to_steer"` for a queued message promoted into the run; default `"steer"`. */
	inputIntent?: string;
	attachments?: unknown[];
}

function addSteerMessage(kit: RunKit, h: RunHandle, m: SteerMessage): number {
	const at = nowIso();
	put(
		kit,
		h,
		"messages",
		{
			createdBy: m.createdBy,
			creationSource: m.creationSource,
			id: m.messageId,
			threadId: h.thread.id,
			runId: h.run.id,
			nodeId: h.node.id,
			role: "user",
			text: m.text,
			attachments: m.attachments ?? [],
			streaming: false,
			createdAt: at,
			updatedAt: at,
		},
		"message.updated",
	);
	addItem(kit, h, {
		id: `turn-item:message:${m.messageId}`,
		createdBy: m.createdBy,
		creationSource: m.creationSource,
		type: "user_message",
		messageId: m.messageId,
		inputIntent: m.inputIntent ?? "steer",
		text: m.text,
		attachments: m.attachments ?? [],
	});
	return kit.store.head();
}

/** The message joins the running run; the agent sees it in `steered()`. */
export function steerRun(kit: RunKit, h: RunHandle, m: SteerMessage): number {
	h.steers.push(m.text);
	return addSteerMessage(kit, h, m);
}

/** Interrupts the current attempt and drives a new attempt of the same run with `m.text`. */
export function restartRun(kit: RunKit, h: RunHandle, m: SteerMessage): number {
	const at = nowIso();
	h.controller.abort(); // the old attempt's script stops where it is
	if (h.providerTurn?.status === "running")
		setProviderTurn(kit, h, { status: "interrupted", completedAt: at });
	closePendingRequests(kit, h, "cancelled");
	setAttempt(kit, h, { status: "interrupted", completedAt: at });
	startNewAttempt(kit, h, "steering_restart", {
		preparing: false,
		prompt: m.text,
	});
	setRun(kit, h, { status: "starting", activeAttemptId: h.attempt.id });
	const sequence = addSteerMessage(kit, h, m);
	void driveRun(kit, h, pickScript(m.text));
	return sequence;
}
