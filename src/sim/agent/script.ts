/**
 * What a scripted agent is: the `AgentIO` a script speaks through, the script type and the
 * failure a script throws. Apart from `agent.ts` (which picks a script by prompt) so that the
 * scripts in their own files depend on this, not on the picker that imports them.
 */

import type { RunHandle, RunKit } from "../runs/run-rows.ts";

/** What an approval may carry beyond its prompt (RELEASED-0.1.md §1 "Approval choices"). */
export interface ApprovalExtra {
	options?: { decision: string; label: string; warning?: string }[];
	appName?: string;
	/** `responseCapability` instead of live, e.g. `{type: "not_resumable", reason}`. */
	capability?: Record<string, unknown>;
}

export interface RuntimeResponse {
	decision?: string;
	answers?: Record<string, unknown>;
	/** The user closed the question without answering (`thread.user-input.dismiss`). */
	dismissed?: boolean;
}

export interface AgentIO {
	prompt: string;
	/** Wait one pacing step (stepMs). */
	step(): Promise<void>;
	/** One final assistant message. */
	say(text: string): Promise<void>;
	/** An assistant message streamed as accumulated whole-row upserts, then final. */
	stream(parts: string[]): Promise<void>;
	/**
	 * Runs a command, first asking for approval when the thread's runtime mode wants it
	 * (approval-policy.ts): "run" (nobody was asked), "approved", or "declined" (not run).
	 * Its output is withheld on the wire and read with getTurnItem (command-output.ts).
	 */
	command(
		input: string,
		options?: {
			exitCode?: number;
			reason?: string;
			approval?: ApprovalExtra;
			output?: string;
		},
	): Promise<ToolOutcome>;
	/** A `system_notice` item. */
	notice(message: string): Promise<void>;
	/** Background work that outlives the turn; T3 wakes the thread when it ends (wake-run.ts). */
	backgroundTask(description: string): void;
	/** Edits a file in the workspace, asking first the same way (`file-change`). */
	fileChange(
		fileName: string,
		additions: number,
		deletions: number,
	): Promise<ToolOutcome>;
	/**
	 * A question. `dismissable`: asked as a message-mode request (`responseCapability: {type:
	 * "message"}`), the only kind `thread.user-input.dismiss` accepts (PROTOCOL.md §6.6).
	 */
	ask(
		questions: unknown[],
		options?: { dismissable?: boolean },
	): Promise<RuntimeResponse>;
	/** An approval request of any kind; `command`/`fileChange` use it when the mode asks. */
	approve(
		requestKind: string,
		prompt: string,
		extra?: ApprovalExtra,
	): Promise<RuntimeResponse>;
	/** An `auth_refresh` request: the provider must be signed in again (no turn item). */
	signIn(): Promise<void>;
	/**
	 * A `dynamic_tool_call` request with its `dynamic_tool` item: a T3 client answers it.
	 * `capability`: as for approvals (`not_resumable`: nobody can).
	 */
	clientTool(
		toolName: string,
		input: unknown,
		capability?: Record<string, unknown>,
	): Promise<void>;
	/** Hold the turn open until interrupted or released by `finishRun`. */
	hold(): Promise<void>;
	/** Messages steered into this run so far. */
	steered(): string[];
	/** The run behind this script, for scripts that read or change its thread (parallel-scripts.ts). */
	scope: { kit: RunKit; handle: RunHandle };
}

export type ToolOutcome = "run" | "approved" | "declined";

export type AgentScript = (io: AgentIO) => Promise<void>;

/** How a failed run's `error` item classifies it (released `OrchestrationV2ProviderFailure`). */
export interface FailureDetail {
	class: string;
	code?: string | null;
	/** A usage limit's reset time. */
	resetAt?: string;
	/** T3 arms limit recovery: it resumes the run by itself after `resetAt`. */
	autoResume?: boolean;
}

/** Thrown by a script to end the run `failed` with an `error` turn item. */
export class AgentFailure extends Error {
	constructor(
		message: string,
		readonly detail: FailureDetail = { class: "provider_error" },
	) {
		super(message);
		this.name = "AgentFailure";
	}
}
